import { Inject, Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthRequest, ResolvedAuthOptions } from '../auth-module-options.interface';
import { applyDenialHeaders, forbidden, unauthorized } from '../auth-denial';
import { publishAuthAllowed, publishAuthDenied } from '../auth-events';
import { AUTH_OPTIONS, SKIP_AUTH_KEY } from '../auth.constants';
import { AUTH_SKIPPED, getAuthContext } from '../request-context';
import { RouteFlagLookup } from '../../common/route-flag-lookup';
import { RbacService, type RbacDecision } from './rbac.service';

/**
 * Second guard, after the JWT/tenant guard: answers 403 when no role of the user grants the request.
 * Needs the context the JWT guard stored; without it the request was never authenticated -> 401.
 */
@Injectable()
export class RbacGuard implements CanActivate {
  private readonly logger = new Logger('RbacGuard');
  private readonly skipAuth: RouteFlagLookup;

  constructor(
    @Inject(AUTH_OPTIONS) private readonly options: ResolvedAuthOptions,
    private readonly rbac: RbacService,
    reflector: Reflector,
  ) {
    this.skipAuth = new RouteFlagLookup(reflector, SKIP_AUTH_KEY);
  }

  // Synchronous on the warm path (see RbacService.authorize): Nest awaits a returned promise twice per guard.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // RBAC authorizes HTTP requests (docs/auth.md); RPC and WebSocket handlers of a hybrid app are not its business.
    if (!this.options.rbacEnabled || context.getType() !== 'http') return true;
    // An HTTP context's arguments are (request, reply): read directly, without switchToHttp()'s three closures.
    const request = context.getArgByIndex<AuthRequest>(0);
    // A context means the JWT guard authenticated this request, so it has already honoured @SkipAuth().
    const auth = getAuthContext(request);
    if (!auth) {
      if (request[AUTH_SKIPPED] || this.skipAuth.isSet(context)) return true;
      const denial = unauthorized(this.options, 'missing_token', 'RBAC needs the JWT guard to run first', false);
      applyDenialHeaders(context.getArgByIndex(1), denial);
      publishAuthDenied('rbac', denial);
      throw denial;
    }

    const decision = this.rbac.authorize(auth, request);
    return decision instanceof Promise
      ? decision.then((settled) => this.conclude(settled, context))
      : this.conclude(decision, context);
  }

  private conclude(decision: RbacDecision, context: ExecutionContext): true {
    if (decision.allowed) {
      publishAuthAllowed('rbac');
      return true;
    }
    const denial = forbidden(this.options, decision.code, decision.detail);
    if (this.options.debugMode) this.logger.debug(`403 ${decision.code}: ${decision.detail}`);
    applyDenialHeaders(context.getArgByIndex(1), denial);
    publishAuthDenied('rbac', denial);
    throw denial;
  }
}
