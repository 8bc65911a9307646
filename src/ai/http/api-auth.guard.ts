import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** The host's authentication hook: receives the request, returns truthy to allow it (seed 001 section 5). */
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
export const SKIP_API_AUTH_KEY = 'tollgate:skip-api-auth';
/** Liveness and readiness stay reachable without credentials (DECISIONS.md B3). */
export const SkipApiAuth = () => SetMetadata(SKIP_API_AUTH_KEY, true);

const BEARER = /^bearer\s+(.+)$/i;

/** Compares digests so neither the content nor the length of the token leaks through timing. */
export function bearerTokenMatches(authorization: string | string[] | undefined, expected: string | undefined): boolean {
  if (!expected || typeof authorization !== 'string') return false;
  const match = BEARER.exec(authorization.trim());
  if (!match) return false;
  const given = createHash('sha256').update(match[1].trim()).digest();
  return timingSafeEqual(given, createHash('sha256').update(expected).digest());
}

@Injectable()
export class ApiAuthGuard implements CanActivate {
  constructor(
    @Inject(API_AUTH_OPTIONS) private readonly options: ApiAuthOptions,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.options.mode !== 'token') return true;
    if (this.reflector.getAllAndOverride<boolean>(SKIP_API_AUTH_KEY, [context.getHandler(), context.getClass()])) {
      return true;
    }
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const allowed = this.options.hook
      ? await this.options.hook(request)
      : bearerTokenMatches(request.headers.authorization, this.options.token);
    // 401 `authentication_required`; the exception filter adds `WWW-Authenticate: Bearer`.
    if (!allowed) throw new UnauthorizedException({ message: 'A valid API token is required.', tollgate: true });
    return true;
  }
}
