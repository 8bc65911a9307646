import type { ArgumentsHost } from '@nestjs/common';
import { NotFoundException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiExceptionFilter } from './api-exception.filter';
import type { ErrorShape } from './error-shapes';

/** What the filter sent: the reply's status, headers and body. */
function sent(filter: ApiExceptionFilter, url: string, exception: unknown) {
  const out: { status?: number; headers?: Record<string, string>; body?: unknown } = {};
  const reply = {
    status: (status: number) => ((out.status = status), reply),
    headers: (headers: Record<string, string>) => ((out.headers = headers), reply),
    send: (body: unknown) => ((out.body = body), reply),
  } as unknown as FastifyReply;
  const request = { url, method: 'GET', id: 'req-1', server: { findRoute: () => null } } as unknown as FastifyRequest;
  const host = { switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }) } as unknown as ArgumentsHost;
  filter.catch(exception, host);
  return out;
}

const teapotShape = (prefix: string, word: string): ErrorShape => ({
  handles: (request) => request.url.startsWith(prefix),
  answer: (error) => ({ status: error.status, headers: error.headers, body: { [word]: error.message } }),
});

describe('ApiExceptionFilter and the error shapes it is given', () => {
  it('answers the /v1 envelope without shapes, and for a path no shape handles', () => {
    expect(sent(new ApiExceptionFilter(), '/x/v1/nowhere', new NotFoundException()).body).toEqual({
      error: { type: 'not_found', message: 'No route matches this path.' },
      request_id: 'req-1',
    });
    expect(sent(new ApiExceptionFilter([teapotShape('/a/', 'a')]), '/v1/nowhere', new NotFoundException()).body).toMatchObject({ error: { type: 'not_found' } });
  });

  it('lets the first shape that handles the request word the same answer', () => {
    const filter = new ApiExceptionFilter([teapotShape('/a/', 'first'), teapotShape('/a/b/', 'second'), teapotShape('/b/', 'b')]);
    expect(sent(filter, '/a/b/nowhere', new NotFoundException())).toEqual({ status: 404, headers: {}, body: { first: 'No route matches this path.' } });
    expect(sent(filter, '/b/nowhere', new NotFoundException()).body).toEqual({ b: 'No route matches this path.' });
  });
});
