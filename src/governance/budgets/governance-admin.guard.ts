import { type CanActivate, type ExecutionContext, HttpException, Injectable } from '@nestjs/common';
import { governanceOf } from '../governance-identity';

/**
 * Admin routes of governance: only a caller the API auth layer marked admin (the admin token, or a JWT with an
 * admin role). It runs after that layer, so a request without governance state did not authenticate.
 */
@Injectable()
export class GovernanceAdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const state = governanceOf(context.switchToHttp().getRequest<object>());
    if (!state) throw new HttpException({ message: 'Authentication required.', tollgate: true }, 401);
    if (!state.admin) throw new HttpException({ message: 'This route needs the admin token or an admin role.', tollgate: true }, 403);
    return true;
  }
}
