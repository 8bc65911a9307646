import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { AdminRequiredError } from './governance-errors';
import { governanceOf } from './governance-identity';

/** After ApiAuthGuard: only the admin token or a JWT holding an admin role passes (403 otherwise). */
@Injectable()
export class GovernanceAdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (!governanceOf(context.getArgByIndex<object>(0))?.admin) throw new AdminRequiredError();
    return true;
  }
}
