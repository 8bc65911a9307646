import { CanActivate, ExecutionContext, Inject, Injectable, Optional, SetMetadata, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { RouteFlagLookup } from '../common/route-flag-lookup';
import { sha256, sha256Hex } from '../common/sha256';
import type { GovernanceRequestState } from '../governance/governance-identity';
import { API_TOKEN_STATE, setGovernance } from '../governance/governance-state';

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

/** Bearer tokens with this prefix are API keys (src/governance/keys), never the shared token. */
export const API_KEY_PREFIX = 'tg_';

/**
 * Governance's view of callers (src/governance), present when the server imports GovernanceModule: API keys,
 * the admin token and JWT callers become a GovernanceRequestState on the request.
 */
export interface ApiCallerResolver {
  /**
   * A bearer starting with `tg_`: the key's state, synchronously when the key was looked up moments ago;
   * rejects (401 invalid_key) a bad, revoked or expired key.
   */
  authenticateKey(key: string): GovernanceRequestState | Promise<GovernanceRequestState>;
  /** The caller AuthModule's guard verified (api.auth jwt), or undefined without an auth context. */
  fromAuthContext(request: object): GovernanceRequestState | undefined;
  /** The admin token's state when `token` is it (compared in constant time), else undefined. */
  adminByToken(token: string): GovernanceRequestState | undefined;
}

export const API_CALLER_RESOLVER = Symbol('tollgate:api-caller-resolver');
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
  const token = bearerOf(authorization);
  return token !== undefined && tokenMatches(token, expected);
}

function tokenMatches(token: string, expected: Buffer | undefined): boolean {
  return expected !== undefined && timingSafeEqual(sha256(token), expected);
}

/** The token of an `Authorization: Bearer <token>` header, else undefined. */
export function bearerOf(authorization: string | string[] | undefined): string | undefined {
  if (typeof authorization !== 'string') return undefined;
  const match = BEARER.exec(authorization.trim());
  return match ? match[1].trim() : undefined;
}

/**
 * Headers that carry an API key bare, as each vendor's SDK sends it, after `Authorization: Bearer`: Anthropic's
 * `x-api-key` and Google's `x-goog-api-key`. So a client of any dialect needs only its base URL set to Tollgate.
 */
const API_KEY_HEADERS = ['x-api-key', 'x-goog-api-key'] as const;

/** The API credential a request presents: its bearer token, else the first vendor key header it carries. */
export function presentedApiToken(headers: IncomingHttpHeaders): string | undefined {
  const bearer = bearerOf(headers.authorization);
  if (bearer !== undefined) return bearer;
  for (const name of API_KEY_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/**
 * The credential of a request: presentedApiToken's, else, on Gemini's surface only, the `?key=` Google's API
 * also takes (curl examples and some clients put it there). The access log leaves query strings out.
 */
export function presentedRequestToken(request: FastifyRequest): string | undefined {
  const token = presentedApiToken(request.headers);
  if (token !== undefined || !isGeminiRoute(request.url)) return token;
  const key = (request.query as Record<string, unknown> | undefined)?.key;
  return typeof key === 'string' && key.trim() !== '' ? key.trim() : undefined;
}

function isGeminiRoute(url: string): boolean {
  return url.split('?', 1)[0].includes('/gemini/v1beta/');
}

/** Compares digests so neither the content nor the length of the token leaks through timing. */
export function sameToken(token: string, expected: string | undefined): boolean {
  return tokenMatches(token, tokenDigest(expected));
}

/** What a request's rate limit counts: the configured token, a presented token (hashed then), or nothing. */
type CountedAs = typeof SHARED_TOKEN | typeof UNCOUNTED | string;

const SHARED_TOKEN = Symbol('tollgate:shared-token');
const UNCOUNTED = Symbol('tollgate:uncounted');

/**
 * Left on a request whose credential was checked before its body was read (src/server/api-pre-auth.ts), so
 * the guard does not check it again: what its rate limit counts. A symbol: no caller can set it.
 */
const CHECKED_BEFORE_BODY = Symbol('tollgate:api-auth-checked');

interface CheckedRequest {
  [CHECKED_BEFORE_BODY]?: CountedAs;
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
    @Optional() @Inject(API_CALLER_RESOLVER) private readonly callers?: ApiCallerResolver,
  ) {
    this.skip = new RouteFlagLookup(reflector, SKIP_API_AUTH_KEY);
    this.expectedDigest = tokenDigest(options.token);
    this.expectedTokenKey = this.expectedDigest?.toString('hex');
  }

  // Synchronous for the configured token, or a key looked up moments ago, without a per-token limit: Nest
  // awaits a returned promise twice.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (this.skip.isSet(context)) return true;
    const request = context.getArgByIndex<FastifyRequest>(0);
    const checked = (request as CheckedRequest)[CHECKED_BEFORE_BODY];
    if (checked !== undefined) return this.limited(context, checked);
    if (this.options.mode !== 'token') return this.withoutToken(request);
    const counted = this.authenticate(request);
    return typeof counted === 'object' ? counted.then((value) => this.limited(context, value)) : this.limited(context, counted);
  }

  /**
   * `api.auth: token`, from a hook that runs before the body is read: checks the request's credential (the
   * guard then only applies the token's rate limit) and leaves its governance state; throws or rejects 401.
   */
  checkBeforeBody(request: FastifyRequest): void | Promise<void> {
    const counted = this.authenticate(request);
    if (typeof counted !== 'object') {
      (request as CheckedRequest)[CHECKED_BEFORE_BODY] = counted;
      return;
    }
    return counted.then((value) => {
      (request as CheckedRequest)[CHECKED_BEFORE_BODY] = value;
    });
  }

  /** `api.auth: token`: the host's hook, an API key, the shared token or the admin token; throws or rejects 401. */
  private authenticate(request: FastifyRequest): CountedAs | Promise<CountedAs> {
    if (this.options.hook) return this.viaHook(this.options.hook, request);
    const token = presentedRequestToken(request);
    if (token === undefined) throw refused();
    const callers = this.callers;
    if (callers && token.startsWith(API_KEY_PREFIX)) return this.viaKey(callers, token, request);
    if (!tokenMatches(token, this.expectedDigest)) return this.viaAdminToken(token, request);
    setGovernance(request, API_TOKEN_STATE);
    return SHARED_TOKEN;
  }

  /** The per-token rate limit, when the server has one: a key and a hook's token counted under their digest. */
  private limited(context: ExecutionContext, counted: CountedAs): boolean | Promise<boolean> {
    const limiter = this.limiter;
    if (!limiter || counted === UNCOUNTED) return true;
    const tokenKey = counted === SHARED_TOKEN ? this.expectedTokenKey : sha256Hex(counted);
    return tokenKey ? limiter.consume(context, tokenKey).then(() => true) : true;
  }

  /** api.auth jwt: AuthModule's guard decided; api.auth none: every caller counts as the shared token (or the admin token). */
  private withoutToken(request: FastifyRequest): true {
    const callers = this.callers;
    if (!callers) return true;
    if (this.options.mode === 'jwt') {
      const state = callers.fromAuthContext(request);
      if (state) setGovernance(request, state);
      return true;
    }
    const token = presentedRequestToken(request);
    setGovernance(request, (token !== undefined && callers.adminByToken(token)) || API_TOKEN_STATE);
    return true;
  }

  /** A key is counted per key, under its stored digest, like any other token. */
  private viaKey(callers: ApiCallerResolver, key: string, request: FastifyRequest): CountedAs | Promise<CountedAs> {
    const admitted = (state: GovernanceRequestState): CountedAs => {
      setGovernance(request, state);
      return key;
    };
    const state = callers.authenticateKey(key);
    return state instanceof Promise ? state.then(admitted) : admitted(state);
  }

  private viaAdminToken(token: string, request: FastifyRequest): CountedAs {
    const state = this.callers?.adminByToken(token);
    if (!state) throw refused();
    setGovernance(request, state);
    return UNCOUNTED;
  }

  /** A host hook may accept many tokens (or none: then there is nothing to count per token). */
  private async viaHook(hook: ApiAuthHook, request: FastifyRequest): Promise<CountedAs> {
    if (!(await hook(request))) throw refused();
    return presentedRequestToken(request) ?? UNCOUNTED;
  }
}

/** 401 `authentication_required`; the exception filter adds `WWW-Authenticate: Bearer`. */
function refused(): UnauthorizedException {
  return new UnauthorizedException({ message: 'A valid API token is required.', tollgate: true });
}
