import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Controller, Get, Module, Param, type INestApplication } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { SkipAuth } from '../src/auth/auth.decorators';
import { AuthModule } from '../src/auth/auth.module';
import { RbacService } from '../src/auth/rbac/rbac.service';

/**
 * Issue 16, points 2 and 3, through a real Nest + Fastify server: the guards must decide on the path the
 * handler will see, and no permission may stall the process. Requests go over a socket with the path as
 * written (an injecting or fetching client would resolve `%2e%2E/` and `\` before sending).
 */
const SECRET = 'rbac-hardening-e2e-secret-long-enough-for-hs256';
const HOST = 'acme.example.com';

function sign(payload: Record<string, unknown>): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ exp: Math.floor(Date.now() / 1000) + 600, ...payload })}`;
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
}

const READER = sign({ user_id: 1, role_ids: ['reader'], pathname_slugs: ['acme'] });
const handled: string[] = [];

@Controller()
class FilesController {
  @Get('api/v1/:slug/files/*')
  file(@Param('slug') slug: string, @Param('*') rest: string) {
    handled.push(rest);
    return { slug, rest };
  }

  // Unguarded twin: shows what a handler receives for the same path when no guard stands in front of it.
  @Get('open/:slug/files/*')
  @SkipAuth()
  open(@Param('slug') slug: string, @Param('*') rest: string) {
    return { slug, rest };
  }
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

function send(port: number, path: string, token = READER): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { host: HOST, ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const outgoing = httpRequest({ host: '127.0.0.1', port, path, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

async function start(): Promise<{ app: INestApplication; port: number; rbac: RbacService }> {
  @Module({
    imports: [
      AuthModule.forRoot({
        jwtSecret: SECRET,
        validatePathnameSlug: true,
        rbacEnabled: true,
        rbacCacheStore: 'memory',
        permissionsCacheStore: 'memory',
      }),
    ],
    controllers: [FilesController],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, port: address.port, rbac: app.get(RbacService) };
}

describe('RBAC hardening over HTTP (issue 16, points 2 and 3)', () => {
  let app: INestApplication;
  let port: number;
  let rbac: RbacService;
  let warnings: string[];

  beforeAll(async () => {
    ({ app, port, rbac } = await start());
    const loaded = await rbac.setRecord({
      permissions: {
        reader: ['files/public/*:get', '%r{files/(a+)+}:get', '%r{files/(docs)/\\1}:get', '%r{files/shared/[^/]+}:get'],
      },
    });
    warnings = loaded.warnings;
  });
  afterAll(() => app.close());
  beforeEach(() => {
    handled.length = 0;
  });

  it('serves what the permission grants, and the handler reads the path the guards read', async () => {
    expect(await send(port, '/api/v1/acme/files/public/report.txt')).toEqual({
      status: 200,
      body: { slug: 'acme', rest: 'public/report.txt' },
    });
    expect((await send(port, '/api/v1/acme/files/secret')).status).toBe(403);
  });

  // Without a guard, Fastify's router decodes these into a parameter that climbs out of files/public.
  it.each([
    ['..%2F', '/files/public/..%2Fsecret', 'public/../secret'],
    ['%2E%2E%2F', '/files/public/%2E%2E%2Fsecret', 'public/../secret'],
    ['%2e%2E/', '/files/public/%2e%2E/secret', 'public/../secret'],
    ['..%5C', '/files/public/..%5Csecret', 'public/..\\secret'],
    ['%2e%2e%5c', '/files/public/%2e%2e%5csecret', 'public/..\\secret'],
  ])('refuses %s with 400 invalid_path before any handler runs', async (_form, path, handlerWouldSee) => {
    expect((await send(port, `/open/acme${path}`, '')).body).toEqual({ slug: 'acme', rest: handlerWouldSee });
    expect(await send(port, `/api/v1/acme${path}`)).toEqual({
      status: 400,
      body: { error: 'Bad request', status: 400, code: 'invalid_path' },
    });
    expect(handled).toEqual([]);
  });

  it('refuses an encoded separator that would give a regex permission two segments for one', async () => {
    expect((await send(port, '/api/v1/acme/files/shared/report')).status).toBe(200);
    expect(await send(port, '/api/v1/acme/files/shared/a%2Fb')).toMatchObject({ status: 400, body: { code: 'invalid_path' } });
    expect(handled).toEqual(['shared/report']);
  });

  it('refuses an encoded separator in the slug, and reads an escaped unreserved slug as the handler does', async () => {
    expect((await send(port, '/open/ac%2Fme/files/public/x', '')).body).toEqual({ slug: 'ac/me', rest: 'public/x' });
    expect(await send(port, '/api/v1/ac%2Fme/files/public/x')).toMatchObject({ status: 400, body: { code: 'invalid_path' } });
    expect(await send(port, '/api/v1/%61cme/files/public/x')).toEqual({ status: 200, body: { slug: 'acme', rest: 'public/x' } });
    expect(await send(port, '/api/v1/acm%65x/files/public/x')).toMatchObject({ status: 403, body: { code: 'slug_denied' } });
  });

  it('refuses an absolute-form target, which the router would route to another tenant\'s slug', async () => {
    expect(await send(port, 'http://x/api/v1/other/files/public/x')).toMatchObject({ status: 400, body: { code: 'invalid_path' } });
    expect(handled).toEqual([]);
  });

  it('does not refuse double encoding: the router decodes once, so the handler reads a literal %2F', async () => {
    expect(await send(port, '/api/v1/acme/files/public/..%252Fsecret')).toEqual({
      status: 200,
      body: { slug: 'acme', rest: 'public/..%2Fsecret' },
    });
  });

  it('answers a hostile path under a nested-quantifier permission at once, and keeps serving', async () => {
    // A backtracking engine needs ~10 s for 31 a's and a mismatch, doubling per extra 'a'; the bound leaves a
    // busy CI machine a wide margin for one loopback request.
    const started = Date.now();
    const hostile = await send(port, `/api/v1/acme/files/${'a'.repeat(31)}!`);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(hostile).toMatchObject({ status: 403, body: { code: 'rbac_denied' } });
    expect((await send(port, '/api/v1/acme/files/aaaa')).status).toBe(200);
  });

  it('skips a permission the linear-time engine cannot run, naming role and permission, and applies the rest', async () => {
    expect(warnings).toEqual([
      expect.stringMatching(/^role "reader": permission "%r\{files\/\(docs\)\/\\\\1\}:get" skipped: regular expression not supported by the linear-time \(RE2\) engine/),
    ]);
    expect((await send(port, '/api/v1/acme/files/docs/docs')).status).toBe(403);
    expect((await send(port, '/api/v1/acme/files/public/y')).status).toBe(200);
  });
});
