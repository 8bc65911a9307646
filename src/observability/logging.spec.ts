import { defaultLogLevel, REDACTED, redactHeaders, ServerLogging } from './logging';

describe('redactHeaders', () => {
  it('replaces credentials of any spelling and keeps the rest', () => {
    expect(
      redactHeaders({
        authorization: 'Bearer a',
        'proxy-authorization': 'Basic b',
        cookie: 'c=1',
        'set-cookie': ['d=2'],
        'x-api-key': 'e',
        'api-key': 'f',
        'x-goog-api-key': 'g',
        'x-auth-token': 'h',
        'x-client-secret': 'i',
        'content-type': 'application/json',
        'x-request-id': 'r-1',
      }),
    ).toEqual({
      authorization: REDACTED,
      'proxy-authorization': REDACTED,
      cookie: REDACTED,
      'set-cookie': REDACTED,
      'x-api-key': REDACTED,
      'api-key': REDACTED,
      'x-goog-api-key': REDACTED,
      'x-auth-token': REDACTED,
      'x-client-secret': REDACTED,
      'content-type': 'application/json',
      'x-request-id': 'r-1',
    });
  });

  it('accepts no headers', () => {
    expect(redactHeaders(undefined)).toEqual({});
  });
});

describe('defaultLogLevel', () => {
  const config = (auth?: { debugMode?: boolean }) => ({ auth }) as unknown as Parameters<typeof defaultLogLevel>[0];

  it('is debug when the AuthModule logs its decisions, else info', () => {
    expect(defaultLogLevel(config({ debugMode: true }), {})).toBe('debug');
    expect(defaultLogLevel(config({ debugMode: false }), { NODE_ENV: 'development' })).toBe('info');
    expect(defaultLogLevel(config({}), { NODE_ENV: 'development' })).toBe('debug');
    expect(defaultLogLevel(config({}), {})).toBe('info');
    expect(defaultLogLevel(config(undefined), { NODE_ENV: 'development' })).toBe('info');
  });
});

describe('ServerLogging', () => {
  function capture(requests?: boolean) {
    const lines: Record<string, unknown>[] = [];
    const destination = { write: (chunk: string) => chunk.split('\n').filter(Boolean).forEach((line) => lines.push(JSON.parse(line))) };
    return { lines, logging: new ServerLogging({ destination, requests }) };
  }

  it("follows Nest's logger contract: context last, objects merged, errors as err, error(message, stack, context)", () => {
    const { lines, logging } = capture();
    logging.logger.log('plain', 'Ctx');
    logging.logger.warn({ detail: 'x', token: 'never-written' }, 'Ctx');
    logging.logger.error(new Error('thrown'), 'Ctx');
    logging.logger.error('failed', 'Error: failed\n    at somewhere (file.js:1:1)', 'ExceptionsHandler');
    logging.logger.debug?.('below the level', 'Ctx');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'plain', context: 'Ctx' });
    expect(lines[1]).toMatchObject({ level: 40, detail: 'x', token: REDACTED, context: 'Ctx' });
    expect(lines[2]).toMatchObject({ level: 50, context: 'Ctx', err: { message: 'thrown' } });
    expect(lines[3]).toMatchObject({ level: 50, context: 'ExceptionsHandler', err: { message: 'failed', stack: expect.stringContaining('at somewhere') } });
    expect(lines.every((line) => !('request_id' in line))).toBe(true);
  });

  it('writes the access line from onResponse, at error level for 5xx, and none when requests is false', () => {
    for (const requests of [true, false]) {
      const { lines, logging } = capture(requests);
      const hooks: Record<string, (...args: unknown[]) => void> = {};
      logging.install({ addHook: (name: string, hook: (...args: unknown[]) => void) => (hooks[name] = hook) } as never);
      const request = { id: 'r-9', method: 'POST', url: '/v1/x?api_key=k', headers: { authorization: 'Bearer t', accept: '*/*' }, raw: { socket: { remoteAddress: '127.0.0.1' } } };
      const reply = { statusCode: 502, elapsedTime: 1.23456, getHeaders: () => ({ 'set-cookie': 's=1' }) };
      hooks.onRequest(request, reply, () => logging.logger.log('inside', 'Ctx'));
      hooks.onResponse?.(request, reply, () => undefined);
      expect(lines[0]).toMatchObject({ request_id: 'r-9', msg: 'inside' });
      if (!requests) {
        expect(hooks.onResponse).toBeUndefined();
        expect(lines).toHaveLength(1);
        continue;
      }
      expect(lines[1]).toMatchObject({
        level: 50,
        msg: 'POST 502',
        request_id: 'r-9',
        req: { method: 'POST', path: '/v1/x', headers: { authorization: REDACTED, accept: '*/*' }, remote_address: '127.0.0.1' },
        res: { status: 502, headers: { 'set-cookie': REDACTED } },
        responseTime: 1.235,
      });
    }
  });
});
