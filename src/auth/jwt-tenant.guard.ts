import {
  Inject,
  Injectable,
  InternalServerErrorException,
  Logger,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { applyDenialHeaders, forbidden, unauthorized, type AuthDeniedException } from './auth-denial';
import { publishAuthAllowed, publishAuthDenied } from './auth-events';
import type { AuthRequest, ResolvedAuthOptions } from './auth-module-options.interface';
import { AUTH_OPTIONS, SKIP_AUTH_KEY } from './auth.constants';
import { extractClaims, type ClaimRequirements } from './claims';
import { requestHost } from './request-parts';
import { AUTH_SKIPPED, setAuthContext, type AuthContext } from './request-context';
import { compileSkipPaths, type SkipPathMatcher } from './skip-paths';
import { checkPathnameSlug, checkSubdomain, checkTenantHeader } from './tenant-checks';
import { extractToken } from './token-extraction';
import { TokenVerifier } from './token-verifier';

/**
 * First guard (DECISIONS.md A3; first failure wins): skip paths -> token -> claims -> subdomain ->
 * pathname slug -> tenant header -> custom validator -> request context. RBAC is the next guard.
 * Reads only the request and its own options; never logs the token.
 */
@Injectable()
export class JwtTenantGuard implements CanActivate {
  private readonly logger = new Logger('JwtTenantGuard');
  private readonly verifier: TokenVerifier;
  private readonly skipPath: SkipPathMatcher;
  private readonly required: ClaimRequirements;

  constructor(
    @Inject(AUTH_OPTIONS) private readonly options: ResolvedAuthOptions,
    private readonly reflector: Reflector,
  ) {
    this.verifier = new TokenVerifier(options);
    this.skipPath = compileSkipPaths(options.skipPaths);
    this.required = {
      tenantId: options.validateTenantId,
      subdomain: options.validateSubdomain,
      pathnameSlugs: options.validatePathnameSlug,
    };
  }

  // Synchronous unless a customPayloadValidator is set: Nest awaits a returned promise twice per guard.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // The seed guards HTTP requests; RPC and WebSocket handlers of a hybrid app are not its business.
    if (context.getType() !== 'http') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<AuthRequest>();
    const options = this.options;

    if (
      (options.skipPreflight && request.method === 'OPTIONS') ||
      this.skipPath(request.url) ||
      this.reflector.getAllAndOverride<boolean>(SKIP_AUTH_KEY, [context.getHandler(), context.getClass()])
    ) {
      request[AUTH_SKIPPED] = true;
      return true;
    }

    const source = extractToken(request.headers, options.tokenCookieName);
    if (!('token' in source)) throw this.deny(http.getResponse(), unauthorized(options, source.code, source.detail, false), request);

    const verified = this.verifier.verify(source.token);
    if (!verified.ok) throw this.deny(http.getResponse(), unauthorized(options, verified.code, verified.detail, true), request);

    const claims = extractClaims(verified.payload, options.payloadMapping, this.required);
    if (!claims.ok) throw this.deny(http.getResponse(), unauthorized(options, 'invalid_claims', claims.detail, true), request);
    const auth = claims.context;

    const failure =
      (options.validateSubdomain ? checkSubdomain(auth.subdomain, requestHost(request.headers, options.trustProxy)) : undefined) ??
      (options.validatePathnameSlug ? checkPathnameSlug(auth.pathnameSlugs, request.url, options.pathnameSlugPattern) : undefined) ??
      (options.validateTenantId
        ? checkTenantHeader(auth.tenantId, request.headers[options.tenantIdHeaderName], options.tenantIdHeaderName)
        : undefined);
    if (failure) throw this.deny(http.getResponse(), forbidden(options, failure.code, failure.detail), request);

    if (options.customPayloadValidator) return this.validatePayload(options.customPayloadValidator, auth, request, http.getResponse());
    this.accept(request, auth);
    return true;
  }

  private async validatePayload(
    validator: NonNullable<ResolvedAuthOptions['customPayloadValidator']>,
    auth: AuthContext,
    request: AuthRequest,
    reply: unknown,
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
      throw this.deny(reply, forbidden(this.options, 'custom_validation_failed', 'customPayloadValidator rejected the token'), request);
    }
    this.accept(request, auth);
    return true;
  }

  private accept(request: AuthRequest, auth: AuthContext): void {
    setAuthContext(request, auth);
    publishAuthAllowed('jwt');
    if (this.options.debugMode) this.logger.debug(`authenticated user ${auth.userId} for ${request.method} ${request.url.split('?')[0]}`);
  }

  private deny(reply: unknown, denial: AuthDeniedException, request: AuthRequest): AuthDeniedException {
    if (this.options.debugMode) {
      this.logger.debug(`${denial.getStatus()} ${denial.code} ${request.method} ${request.url.split('?')[0]}: ${denial.detail}`);
    }
    applyDenialHeaders(reply, denial);
    publishAuthDenied('jwt', denial);
    return denial;
  }
}
