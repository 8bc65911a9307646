import { Controller, Get, Req } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { getAuthContext } from '../auth/request-context';
import { JWT_SCHEME } from '../observability/openapi';

/** What the guard established about the caller, for the tour in the README and docs/auth.md. The token itself is never echoed. */
export interface AuthContextView {
  user_id: string | number;
  tenant_id: string | number | null;
  subdomain: string | null;
  pathname_slugs: string[];
  role_ids: string[];
}

/** Mounted only when the AuthModule is configured, so the guard always ran before this handler. */
@Controller('auth')
@ApiSecurity(JWT_SCHEME)
export class AuthContextController {
  @Get('context')
  context(@Req() request: FastifyRequest): AuthContextView {
    const context = getAuthContext(request);
    // The global guard rejects unauthenticated calls first; reaching here without a context is a wiring bug.
    if (!context) throw new Error('auth context missing: the AuthModule guard did not run');
    return {
      user_id: context.userId,
      tenant_id: context.tenantId ?? null,
      subdomain: context.subdomain ?? null,
      pathname_slugs: context.pathnameSlugs,
      role_ids: context.roleIds,
    };
  }
}
