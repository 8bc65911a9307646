import { CanActivate, ExecutionContext, Inject, Injectable, Optional, SetMetadata, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import crypto, { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { RouteFlagLookup } from '../common/route-flag-lookup';

/** The host's authentication hook: receives the request, returns truthy to allow it (docs/gateway.md). */
export type ApiAuthHook = (request: FastifyRequest) => unknown;

export interface ApiAuthOptions {
  /** `token`: bearer API token (default); `jwt`: AuthModule protects the API; `none`: explicit opt-out. */
  mode: 'token' | 'jwt' | 'none';
  /** Expected bearer token for `token` mode; unset means every guarded request is rejected. */
  token?: string;
  /** Replaces the bearer check in `token` mode. */
  hook?: ApiAuthHook;
}

export const API_AUTH_OPTIONS = Symbol('tollgate:api-auth-options');

/** Consulted after a request authenticated with a bearer token (the server's per-token rate limit); throws to refuse it. */
export interface ApiTokenLimiter {
  /** `tokenKey`: the hex SHA-256 digest of the token, never the token itself. */
  consume(context: ExecutionContext, tokenKey: string): Promise<void>;
}

export const API_TOKEN_LIMITER = Symbol('tollgate:api-token-limiter');
export const SKIP_API_AUTH_KEY = 'tollgate:skip-api-auth';
/** Liveness and readiness stay reachable without credentials (docs/decisions.md B3). */
export const SkipApiAuth = () => SetMetadata(SKIP_API_AUTH_KEY, true);

const BEARER = /^bearer\s+(.+)$/i;

/** Compares digests so neither the content nor the length of the token leaks through timing. */
export function bearerTokenMatches(authorization: string | string[] | undefined, expected: string | undefined): boolean {
  return bearerDigestMatches(authorization, tokenDigest(expected));
}

/** Undefined for an unset or empty token, which then matches nothing (secure default). */
function tokenDigest(token: string | undefined): Buffer | undefined {
  return token ? sha256(token) : undefined;
}

function bearerDigestMatches(authorization: string | string[] | undefined, expected: Buffer | undefined): boolean {
  if (!expected || typeof authorization !== 'string') return false;
  const match = BEARER.exec(authorization.trim());
  if (!match) return false;
  return timingSafeEqual(sha256(match[1].trim()), expected);
}

/** Node's one-shot hash (20.12+) skips the Hash object, the larger part of the cost; older 20.x lack it. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'buffer') => Buffer }).hash;

function sha256(text: string): Buffer {
  return oneShotHash ? oneShotHash('sha256', text, 'buffer') : createHash('sha256').update(text).digest();
}

@Injectable()
export class ApiAuthGuard implements CanActivate {
  /** The configured token's digest, computed once: a request hashes only the token it presents. */
  private readonly expectedDigest: Buffer | undefined;
  private readonly expectedTokenKey: string | undefined;
  private readonly skip: RouteFlagLookup;

  constructor(
    @Inject(API_AUTH_OPTIONS) private readonly options: ApiAuthOptions,
    reflector: Reflector,
    @Optional() @Inject(API_TOKEN_LIMITER) private readonly limiter?: ApiTokenLimiter,
  ) {
    this.skip = new RouteFlagLookup(reflector, SKIP_API_AUTH_KEY);
    this.expectedDigest = tokenDigest(options.token);
    this.expectedTokenKey = this.expectedDigest?.toString('hex');
  }

  // Synchronous for the configured token without a per-token limit: Nest awaits a returned promise twice.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (this.options.mode !== 'token' || this.skip.isSet(context)) return true;
    const request = context.getArgByIndex<FastifyRequest>(0);
    if (this.options.hook) return this.viaHook(this.options.hook, request, context);
    if (!bearerDigestMatches(request.headers.authorization, this.expectedDigest)) throw refused();
    return this.limiter && this.expectedTokenKey ? this.limiter.consume(context, this.expectedTokenKey).then(() => true) : true;
  }

  private async viaHook(hook: ApiAuthHook, request: FastifyRequest, context: ExecutionContext): Promise<boolean> {
    if (!(await hook(request))) throw refused();
    // A host hook may accept many tokens (or none: then there is nothing to count per token).
    const limiter = this.limiter;
    const tokenKey = limiter ? presentedTokenKey(request.headers.authorization) : undefined;
    if (limiter && tokenKey) await limiter.consume(context, tokenKey);
    return true;
  }
}

/** 401 `authentication_required`; the exception filter adds `WWW-Authenticate: Bearer`. */
function refused(): UnauthorizedException {
  return new UnauthorizedException({ message: 'A valid API token is required.', tollgate: true });
}

function presentedTokenKey(authorization: string | string[] | undefined): string | undefined {
  const match = typeof authorization === 'string' ? BEARER.exec(authorization.trim()) : null;
  return match ? sha256(match[1].trim()).toString('hex') : undefined;
}
