import { Inject, Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthRequest, ResolvedAuthOptions } from '../auth-module-options.interface';
import { applyDenialHeaders, forbidden, unauthorized } from '../auth-denial';
import { publishAuthAllowed, publishAuthDenied } from '../auth-events';
import { AUTH_OPTIONS, SKIP_AUTH_KEY } from '../auth.constants';
import { AUTH_SKIPPED, getAuthContext } from '../request-context';
import { RbacService, type RbacDecision } from './rbac.service';

/**
 * Second guard, after the JWT/tenant guard: answers 403 when no role of the user grants the request.
 * Needs the context the JWT guard stored; without it the request was never authenticated -> 401.
 */
@Injectable()
export class RbacGuard implements CanActivate {
  private readonly logger = new Logger('RbacGuard');

  constructor(
    @Inject(AUTH_OPTIONS) private readonly options: ResolvedAuthOptions,
    private readonly rbac: RbacService,
    private readonly reflector: Reflector,
  ) {}

  // Synchronous on the warm path (see RbacService.authorize): Nest awaits a returned promise twice per guard.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // RBAC authorizes HTTP requests (seed 4); RPC and WebSocket handlers of a hybrid app are not its business.
    if (!this.options.rbacEnabled || context.getType() !== 'http') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<AuthRequest>();
    if (request[AUTH_SKIPPED]) return true;
    if (this.reflector.getAllAndOverride<boolean>(SKIP_AUTH_KEY, [context.getHandler(), context.getClass()])) {
      return true;
    }

    const auth = getAuthContext(request);
    if (!auth) {
      const denial = unauthorized(this.options, 'missing_token', 'RBAC needs the JWT guard to run first', false);
      applyDenialHeaders(http.getResponse(), denial);
      publishAuthDenied('rbac', denial);
      throw denial;
    }

    const decision = this.rbac.authorize(auth, request);
    const reply = http.getResponse();
    return decision instanceof Promise ? decision.then((settled) => this.conclude(settled, reply)) : this.conclude(decision, reply);
  }

  private conclude(decision: RbacDecision, reply: unknown): true {
    if (decision.allowed) {
      publishAuthAllowed('rbac');
      return true;
    }
    const denial = forbidden(this.options, decision.code, decision.detail);
    if (this.options.debugMode) this.logger.debug(`403 ${decision.code}: ${decision.detail}`);
    applyDenialHeaders(reply, denial);
    publishAuthDenied('rbac', denial);
    throw denial;
  }
}
