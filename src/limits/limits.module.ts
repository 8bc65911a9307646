import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule, type ThrottlerOptions } from '@nestjs/throttler';
import { API_TOKEN_LIMITER } from '../ai/http/api-auth.guard';
import { ApiTokenRateLimiter } from './api-token-rate-limiter';
import { LIMITS_SETTINGS } from './limits.constants';
import { type LimitsSettings, limitsKeyPrefix } from './limits-settings';
import { createLimitsStorage } from './limits-storage';
import { TenantThrottlerGuard } from './tenant-throttler.guard';

/**
 * Request rate limits on @nestjs/throttler: per tenant (an APP_GUARD) and per API token (consulted by the
 * /v1 auth guard). The server imports it only when limits are on, after AuthModule, so the tenant guard
 * runs after authentication and RBAC; with limits off nothing of it is on the request path.
 */
@Module({})
export class LimitsModule {
  static forRoot(settings: LimitsSettings): DynamicModule {
    const keyPrefix = limitsKeyPrefix(settings);
    const throttlers: ThrottlerOptions[] = [];
    const providers: Provider[] = [{ provide: LIMITS_SETTINGS, useValue: settings }];
    if (settings.tenant) {
      throttlers.push({
        name: 'tenant',
        limit: settings.tenant.limit,
        ttl: settings.tenant.windowMs,
        // One counter per tenant across every route; Retry-After is set on refusals only.
        generateKey: (_context, tenant) => `${keyPrefix}tenant:${tenant}`,
        setHeaders: false,
      });
      providers.push({ provide: APP_GUARD, useClass: TenantThrottlerGuard });
    }
    if (settings.token) providers.push({ provide: API_TOKEN_LIMITER, useClass: ApiTokenRateLimiter });
    return {
      module: LimitsModule,
      global: true,
      imports: [ThrottlerModule.forRoot({ throttlers, storage: createLimitsStorage(settings.store) })],
      providers,
      exports: settings.token ? [API_TOKEN_LIMITER] : [],
    };
  }
}
