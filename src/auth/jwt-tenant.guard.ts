import {
  Inject,
  Injectable,
  InternalServerErrorException,
  Logger,
  Optional,
  type CanActivate,
  type ExecutionContext,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { applyDenialHeaders, badRequest, forbidden, unauthorized, type AuthDeniedException } from './auth-denial';
import { publishAuthAllowed, publishAuthDenied } from './auth-events';
import type { AuthRequest, ResolvedAuthOptions } from './auth-module-options.interface';
import { AUTH_OPTIONS, SKIP_AUTH_KEY } from './auth.constants';
import { extractClaims, type ClaimRequirements, type ClaimsResult } from './claims';
import { normalizePath, requestHost, requestPathOf } from './request-parts';
import { pathMismatchingRouterOptions } from './router-options';
import { AUTH_SKIPPED, setAuthContext, type AuthContext } from './request-context';
import { RouteFlagLookup } from '../common/route-flag-lookup';
import { compileSkipPaths, type SkipPathMatcher } from './skip-paths';
import { checkPathnameSlug, checkSubdomain, checkTenantHeader } from './tenant-checks';
import { extractToken } from './token-extraction';
import { TokenVerifier } from './token-verifier';

/** The claims of one verified payload with its slugs lower-cased for the slug check; frozen, shared by its requests. */
interface MappedClaims {
  result: ClaimsResult;
  slugs: ReadonlySet<string>;
}

const NO_SLUGS: ReadonlySet<string> = new Set();

/**
 * First guard (docs/decisions.md A3; first failure wins): skip paths -> path (when a check reads it) -> token ->
 * claims -> subdomain -> pathname slug -> tenant header -> custom validator -> request context. RBAC is the
 * next guard.
 * Reads only the request and its own options; never logs the token.
 */
@Injectable()
export class JwtTenantGuard implements CanActivate, OnApplicationBootstrap {
  private readonly logger = new Logger('JwtTenantGuard');
  private readonly verifier: TokenVerifier;
  private readonly skipPath: SkipPathMatcher;
  private readonly required: ClaimRequirements;
  private readonly skipAuth: RouteFlagLookup;
  /** The slug check or RBAC decides on the path, so a path the router would read differently is refused. */
  private readonly pathDecides: boolean;
  // Keyed by the payload object the verifier hands out again for a token it has seen: same token, same claims.
  private readonly claimsByPayload = new WeakMap<object, MappedClaims>();

  constructor(
    @Inject(AUTH_OPTIONS) private readonly options: ResolvedAuthOptions,
    reflector: Reflector,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {
    this.verifier = new TokenVerifier(options);
    this.skipAuth = new RouteFlagLookup(reflector, SKIP_AUTH_KEY);
    this.skipPath = compileSkipPaths(options.skipPaths);
    this.pathDecides = options.validatePathnameSlug || options.rbacEnabled;
    this.required = {
      tenantId: options.validateTenantId,
      subdomain: options.validateSubdomain,
      pathnameSlugs: options.validatePathnameSlug,
    };
  }

  /** A router reading paths otherwise than the checks would void them: refuse to start instead. */
  onApplicationBootstrap(): void {
    if (!this.pathDecides && this.options.skipPaths.length === 0) return;
    const problems = pathMismatchingRouterOptions(this.adapterHost?.httpAdapter?.getInstance());
    if (problems.length === 0) return;
    throw new Error(
      `AuthModule: the router is set with ${problems.join(' and ')}, so it would route paths the slug check, RBAC and skip paths ` +
        'read otherwise; remove the option from the Fastify adapter (Tollgate decides on the path as sent)',
    );
  }

  // Synchronous unless a customPayloadValidator is set: Nest awaits a returned promise twice per guard.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // The seed guards HTTP requests; RPC and WebSocket handlers of a hybrid app are not its business.
    if (context.getType() !== 'http') return true;
    // An HTTP context's arguments are (request, reply): read directly, without switchToHttp()'s three closures.
    const request = context.getArgByIndex<AuthRequest>(0);
    const options = this.options;

    if ((options.skipPreflight && request.method === 'OPTIONS') || this.skipPath(request.url) || this.skipAuth.isSet(context)) {
      request[AUTH_SKIPPED] = true;
      return true;
    }

    let path: string | undefined;
    if (this.pathDecides) {
      path = normalizePath(requestPathOf(request.url));
      if (path === undefined) {
        const detail = 'the path holds a . or .. segment, an encoded separator (%2F, %5C) or a backslash';
        throw this.deny(context, badRequest(options, 'invalid_path', detail), request);
      }
    }

    const source = extractToken(request.headers, options.tokenCookieName);
    if (!('token' in source)) throw this.deny(context, unauthorized(options, source.code, source.detail, false), request);

    const verified = this.verifier.verify(source.token);
    if (!verified.ok) throw this.deny(context, unauthorized(options, verified.code, verified.detail, true), request);

    const claims = this.mapClaims(verified.payload);
    if (!claims.result.ok) throw this.deny(context, unauthorized(options, 'invalid_claims', claims.result.detail, true), request);
    const auth = claims.result.context;

    const failure =
      (options.validateSubdomain ? checkSubdomain(auth.subdomain, requestHost(request.headers, options.trustProxy)) : undefined) ??
      (options.validatePathnameSlug && path !== undefined ? checkPathnameSlug(claims.slugs, path, options.pathnameSlugPattern) : undefined) ??
      (options.validateTenantId
        ? checkTenantHeader(auth.tenantId, request.headers[options.tenantIdHeaderName], options.tenantIdHeaderName)
        : undefined);
    if (failure) throw this.deny(context, forbidden(options, failure.code, failure.detail), request);

    if (options.customPayloadValidator) return this.validatePayload(options.customPayloadValidator, auth, request, context);
    this.accept(request, auth);
    return true;
  }

  private mapClaims(payload: AuthContext['payload']): MappedClaims {
    const known = this.claimsByPayload.get(payload);
    if (known) return known;
    const result = extractClaims(payload, this.options.payloadMapping, this.required);
    let slugs = NO_SLUGS;
    if (result.ok) {
      Object.freeze(result.context.roleIds);
      Object.freeze(result.context.pathnameSlugs);
      Object.freeze(result.context);
      slugs = new Set(result.context.pathnameSlugs.map((slug) => slug.toLowerCase()));
    }
    const mapped: MappedClaims = Object.freeze({ result: Object.freeze(result), slugs });
    this.claimsByPayload.set(payload, mapped);
    return mapped;
  }

  private async validatePayload(
    validator: NonNullable<ResolvedAuthOptions['customPayloadValidator']>,
    auth: AuthContext,
    request: AuthRequest,
    context: ExecutionContext,
  ): Promise<boolean> {
    let accepted: boolean | undefined;
    try {
      accepted = await validator(auth.payload, request);
    } catch (error) {
      // A validator that throws is a bug in the host, not a denial: 500, logged without the payload.
      this.logger.error(`customPayloadValidator threw: ${error instanceof Error ? error.message : String(error)}`);
      throw new InternalServerErrorException();
    }
    if (accepted !== true) {
      throw this.deny(context, forbidden(this.options, 'custom_validation_failed', 'customPayloadValidator rejected the token'), request);
    }
    this.accept(request, auth);
    return true;
  }

  private accept(request: AuthRequest, auth: AuthContext): void {
    setAuthContext(request, auth);
    publishAuthAllowed('jwt');
    if (this.options.debugMode) this.logger.debug(`authenticated user ${auth.userId} for ${request.method} ${request.url.split('?')[0]}`);
  }

  private deny(context: ExecutionContext, denial: AuthDeniedException, request: AuthRequest): AuthDeniedException {
    if (this.options.debugMode) {
      this.logger.debug(`${denial.getStatus()} ${denial.code} ${request.method} ${request.url.split('?')[0]}: ${denial.detail}`);
    }
    applyDenialHeaders(context.getArgByIndex(1), denial);
    publishAuthDenied('jwt', denial);
    return denial;
  }
}
