import { Inject, Injectable } from '@nestjs/common';
import { getAuthContext } from '../auth/request-context';
import { type ApiCallerResolver, sameToken } from '../http/api-auth.guard';
import type { GovernanceRequestState } from './governance-identity';
import { GOVERNANCE_SETTINGS, type GovernanceSettings } from './governance-settings';
import { ADMIN_TOKEN_STATE, type AdminRoles, stateForAuthContext } from './governance-state';
import { ApiKeyAuthenticator } from './keys/api-key-authenticator';

/** Who a caller is, for governance: an API key, the admin token, or a JWT's claims (ApiCallerResolver). */
@Injectable()
export class GovernanceCallers implements ApiCallerResolver {
  private readonly adminRoles: AdminRoles;

  constructor(
    @Inject(GOVERNANCE_SETTINGS) private readonly settings: GovernanceSettings,
    @Inject(ApiKeyAuthenticator) private readonly keys: ApiKeyAuthenticator,
  ) {
    this.adminRoles = { admin: new Set(settings.adminRoles), operator: new Set(settings.operatorRoles ?? []) };
  }

  authenticateKey(key: string): GovernanceRequestState | Promise<GovernanceRequestState> {
    return this.keys.authenticate(key);
  }

  fromAuthContext(request: object): GovernanceRequestState | undefined {
    const context = getAuthContext(request);
    return context && stateForAuthContext(context, this.adminRoles);
  }

  adminByToken(token: string): GovernanceRequestState | undefined {
    return this.settings.adminToken !== undefined && sameToken(token, this.settings.adminToken) ? ADMIN_TOKEN_STATE : undefined;
  }
}
