import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import { SKIP_AUTH_KEY } from './auth.constants';
import { getAuthContext } from './request-context';

/** Marks a route or controller public, whatever `skipPaths` says: neither guard asks for a token. */
export const SkipAuth = () => SetMetadata(SKIP_AUTH_KEY, true);

function contextOf(ctx: ExecutionContext) {
  return getAuthContext(ctx.switchToHttp().getRequest());
}

/** The verified JWT payload (undefined on a skipped route). */
export const AuthPayload = createParamDecorator((_: unknown, ctx: ExecutionContext) => contextOf(ctx)?.payload);
/** The mapped user id. */
export const UserId = createParamDecorator((_: unknown, ctx: ExecutionContext) => contextOf(ctx)?.userId);
/** The mapped tenant id, when the token carries one. */
export const TenantId = createParamDecorator((_: unknown, ctx: ExecutionContext) => contextOf(ctx)?.tenantId);
/** The mapped subdomain claim, when the token carries one. */
export const Subdomain = createParamDecorator((_: unknown, ctx: ExecutionContext) => contextOf(ctx)?.subdomain);
/** The slugs the token grants (always an array). */
export const PathnameSlugs = createParamDecorator((_: unknown, ctx: ExecutionContext) => contextOf(ctx)?.pathnameSlugs ?? []);
