import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { createHash } from 'node:crypto';
import { ApiAuthGuard, type ApiAuthOptions, type ApiTokenLimiter, bearerTokenMatches } from './api-auth.guard';

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

describe('ApiAuthGuard with a token limiter', () => {
  const token = 'tok_limiter_0123456789';
  const digestOf = (text: string) => createHash('sha256').update(text).digest('hex');

  function contextFor(authorization: string | undefined): ExecutionContext {
    const request = { headers: authorization === undefined ? {} : { authorization } };
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
