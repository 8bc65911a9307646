import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { createHash } from 'node:crypto';
import { InvalidKeyError } from '../governance/governance-errors';
import { type GovernanceRequestState, governanceOf } from '../governance/governance-identity';
import { ADMIN_TOKEN_STATE, API_TOKEN_STATE } from '../governance/governance-state';
import { ApiAuthGuard, type ApiAuthOptions, type ApiCallerResolver, type ApiTokenLimiter, bearerTokenMatches, presentedApiToken, presentedRequestToken } from './api-auth.guard';

describe('bearerTokenMatches', () => {
  const token = 'tok_0123456789abcdef';

  it('accepts the configured token with any casing of the scheme and surrounding spaces', () => {
    expect(bearerTokenMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerTokenMatches(`  bearer   ${token}  `, token)).toBe(true);
  });

  it.each([
    ['wrong token', `Bearer ${token}x`],
    ['prefix of the token', `Bearer ${token.slice(0, 5)}`],
    ['another scheme', `Basic ${token}`],
    ['bare token', token],
    ['empty', ''],
    ['missing', undefined],
    ['repeated header', [`Bearer ${token}`, `Bearer ${token}`]],
  ])('rejects %s', (_label, header) => {
    expect(bearerTokenMatches(header as string | string[] | undefined, token)).toBe(false);
  });

  it('rejects everything when no token is configured (secure default)', () => {
    expect(bearerTokenMatches('Bearer anything', undefined)).toBe(false);
    expect(bearerTokenMatches('Bearer ', '')).toBe(false);
  });
});

describe('presentedApiToken', () => {
  it('takes the bearer token first, then the key headers of the vendors\' SDKs', () => {
    expect(presentedApiToken({ authorization: 'Bearer tg_a', 'x-api-key': 'tg_b' })).toBe('tg_a');
    expect(presentedApiToken({ 'x-api-key': ' tg_b ' })).toBe('tg_b');
    expect(presentedApiToken({ 'x-goog-api-key': 'tg_c' })).toBe('tg_c');
    expect(presentedApiToken({ authorization: 'Basic abc', 'x-api-key': '' })).toBeUndefined();
  });
});

describe('presentedRequestToken', () => {
  const request = (url: string, headers: Record<string, string> = {}) => ({ url, headers, query: { key: 'tg_q' } }) as never;

  it("takes Google's ?key= on Gemini's routes only, after the headers", () => {
    expect(presentedRequestToken(request('/gw/gemini/v1beta/models/fast:generateContent?key=tg_q'))).toBe('tg_q');
    expect(presentedRequestToken(request('/gemini/v1beta/models?key=tg_q', { 'x-goog-api-key': 'tg_h' }))).toBe('tg_h');
    expect(presentedRequestToken(request('/openai/v1/chat/completions?key=tg_q'))).toBeUndefined();
    expect(presentedRequestToken(request('/v1/generate?key=tg_q'))).toBeUndefined();
  });
});

describe('ApiAuthGuard with a token limiter', () => {
  const token = 'tok_limiter_0123456789';
  const digestOf = (text: string) => createHash('sha256').update(text).digest('hex');

  function contextFor(authorization: string | undefined): ExecutionContext {
    const request = { url: '/v1/generate', headers: authorization === undefined ? {} : { authorization } };
    const context = new ExecutionContextHost([request, {}, undefined], ApiAuthGuard, contextFor);
    context.setType('http');
    return context;
  }

  function guardWith(options: ApiAuthOptions) {
    const consumed: string[] = [];
    const limiter: ApiTokenLimiter = { consume: async (_context, tokenKey) => void consumed.push(tokenKey) };
    const guard = new ApiAuthGuard(options, new Reflector(), limiter);
    // The guard answers synchronously when it can, as Nest allows; a promise either way for the assertions.
    return { guard: { canActivate: (context: ExecutionContext) => Promise.resolve().then(() => guard.canActivate(context)) }, consumed };
  }

  it('passes the configured token digest once the token is accepted, and nothing for a rejected one', async () => {
    const { guard, consumed } = guardWith({ mode: 'token', token });
    await expect(guard.canActivate(contextFor(`Bearer ${token}x`))).rejects.toThrow('A valid API token is required.');
    expect(consumed).toEqual([]);
    await expect(guard.canActivate(contextFor(`Bearer ${token}`))).resolves.toBe(true);
    expect(consumed).toEqual([digestOf(token)]);
  });

  it('with a host hook, keys by the digest of the presented bearer token, and skips requests without one', async () => {
    const { guard, consumed } = guardWith({ mode: 'token', hook: () => true });
    await guard.canActivate(contextFor('Bearer client-a'));
    await guard.canActivate(contextFor('bearer  client-b '));
    await guard.canActivate(contextFor(undefined));
    expect(consumed).toEqual([digestOf('client-a'), digestOf('client-b')]);
  });

  it('is not consulted when the API is not on its token (jwt or none)', async () => {
    const { guard, consumed } = guardWith({ mode: 'jwt', token });
    await expect(guard.canActivate(contextFor(`Bearer ${token}`))).resolves.toBe(true);
    expect(consumed).toEqual([]);
  });
});

describe('ApiAuthGuard with governance', () => {
  const token = 'tok_governance_0123456789';
  const adminToken = 'admin_governance_0123456789';
  const keyState: GovernanceRequestState = {
    identity: { tenant: 't-1', subTenant: null, subject: 'ab12cd34ef56', subjectKind: 'key', keyId: 'ab12cd34ef56', roles: [] },
    admin: false,
  };
  const jwtState: GovernanceRequestState = {
    identity: { tenant: 't-9', subTenant: null, subject: 'u-1', subjectKind: 'user', roles: ['admin'] },
    admin: true,
  };

  function run(options: ApiAuthOptions, authorization: string | undefined) {
    const request: Record<string, unknown> = { url: '/v1/generate', headers: authorization === undefined ? {} : { authorization } };
    const context = new ExecutionContextHost([request, {}, undefined], ApiAuthGuard, run);
    context.setType('http');
    const presented: string[] = [];
    const callers: ApiCallerResolver = {
      authenticateKey: async (key) => {
        presented.push(key);
        if (key !== 'tg_good') throw new InvalidKeyError();
        return keyState;
      },
      fromAuthContext: () => jwtState,
      adminByToken: (candidate) => (candidate === adminToken ? ADMIN_TOKEN_STATE : undefined),
    };
    const consumed: string[] = [];
    const limiter: ApiTokenLimiter = { consume: async (_context, tokenKey) => void consumed.push(tokenKey) };
    const guard = new ApiAuthGuard(options, new Reflector(), limiter, callers);
    const outcome = Promise.resolve().then(() => guard.canActivate(context));
    return { outcome, state: () => governanceOf(request), presented, consumed };
  }

  it('answers the shared token synchronously and marks it as the api-token caller', () => {
    const request: Record<string, unknown> = { url: '/v1/generate', headers: { authorization: `Bearer ${token}` } };
    const context = new ExecutionContextHost([request, {}, undefined], ApiAuthGuard, run);
    context.setType('http');
    const guard = new ApiAuthGuard({ mode: 'token', token }, new Reflector(), undefined, {
      authenticateKey: () => Promise.reject(new Error('not a key')),
      fromAuthContext: () => undefined,
      adminByToken: () => undefined,
    });
    expect(guard.canActivate(context)).toBe(true);
    expect(governanceOf(request)).toBe(API_TOKEN_STATE);
  });

  it('sends tg_ bearers to the key path, counts them by digest, and leaves the key state', async () => {
    const { outcome, state, presented, consumed } = run({ mode: 'token', token }, 'Bearer tg_good');
    await expect(outcome).resolves.toBe(true);
    expect(presented).toEqual(['tg_good']);
    expect(consumed).toEqual([createHash('sha256').update('tg_good').digest('hex')]);
    expect(state()).toBe(keyState);
  });

  it('takes a key from x-api-key, as the Anthropic SDK sends it', async () => {
    const request: Record<string, unknown> = { url: '/v1/generate', headers: { 'x-api-key': 'tg_good' } };
    const context = new ExecutionContextHost([request, {}, undefined], ApiAuthGuard, run);
    context.setType('http');
    const guard = new ApiAuthGuard({ mode: 'token', token }, new Reflector(), undefined, {
      authenticateKey: async (key) => (key === 'tg_good' ? keyState : Promise.reject(new InvalidKeyError())),
      fromAuthContext: () => undefined,
      adminByToken: () => undefined,
    });
    await expect(Promise.resolve(guard.canActivate(context))).resolves.toBe(true);
    expect(governanceOf(request)).toBe(keyState);
  });

  it('refuses a bad key with invalid_key and sets no state', async () => {
    const { outcome, state } = run({ mode: 'token', token }, 'Bearer tg_bad');
    await expect(outcome).rejects.toThrow(InvalidKeyError);
    expect(state()).toBeUndefined();
  });

  it('accepts the admin token as the admin caller, and still refuses any other token', async () => {
    const admin = run({ mode: 'token', token }, `Bearer ${adminToken}`);
    await expect(admin.outcome).resolves.toBe(true);
    expect(admin.state()).toBe(ADMIN_TOKEN_STATE);
    const other = run({ mode: 'token', token }, 'Bearer something-else');
    await expect(other.outcome).rejects.toThrow('A valid API token is required.');
    expect(other.state()).toBeUndefined();
  });

  it('takes the JWT caller from AuthModule in jwt mode', async () => {
    const { outcome, state } = run({ mode: 'jwt' }, 'Bearer some.jwt.value');
    await expect(outcome).resolves.toBe(true);
    expect(state()).toBe(jwtState);
  });

  it('counts every caller as the shared token in none mode, except the admin token', async () => {
    const anonymous = run({ mode: 'none' }, undefined);
    await expect(anonymous.outcome).resolves.toBe(true);
    expect(anonymous.state()).toBe(API_TOKEN_STATE);
    const admin = run({ mode: 'none' }, `Bearer ${adminToken}`);
    await admin.outcome;
    expect(admin.state()).toBe(ADMIN_TOKEN_STATE);
  });

  it('checked before the body (checkBeforeBody), a key is not looked up again by the guard, which still counts it', async () => {
    const request: Record<string, unknown> = { url: '/v1/generate', headers: { authorization: 'Bearer tg_good' } };
    const context = new ExecutionContextHost([request, {}, undefined], ApiAuthGuard, run);
    context.setType('http');
    let lookups = 0;
    const consumed: string[] = [];
    const guard = new ApiAuthGuard({ mode: 'token', token }, new Reflector(), { consume: async (_context, tokenKey) => void consumed.push(tokenKey) }, {
      authenticateKey: async () => (lookups++, keyState),
      fromAuthContext: () => undefined,
      adminByToken: () => undefined,
    });
    await guard.checkBeforeBody(request as never);
    expect(governanceOf(request)).toBe(keyState);
    await expect(Promise.resolve(guard.canActivate(context))).resolves.toBe(true);
    expect(lookups).toBe(1);
    expect(consumed).toEqual([createHash('sha256').update('tg_good').digest('hex')]);
  });

  it('checked before the body, a refused credential throws the same 401 as the guard, and the shared token is synchronous', async () => {
    const guard = new ApiAuthGuard({ mode: 'token', token }, new Reflector());
    expect(() => guard.checkBeforeBody({ url: '/v1/generate', headers: {} } as never)).toThrow('A valid API token is required.');
    expect(() => guard.checkBeforeBody({ url: '/v1/generate', headers: { authorization: 'Bearer nope' } } as never)).toThrow('A valid API token is required.');
    const request: Record<string, unknown> = { url: '/v1/generate', headers: { authorization: `Bearer ${token}` } };
    expect(guard.checkBeforeBody(request as never)).toBeUndefined();
    expect(governanceOf(request)).toBe(API_TOKEN_STATE);
  });
});
