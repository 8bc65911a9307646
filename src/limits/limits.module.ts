import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { API_TOKEN_LIMITER } from '../http/api-auth.guard';
import { ApiTokenRateLimiter } from './api-token-rate-limiter';
import { LIMITS_SETTINGS, LIMITS_STORAGE } from './limits.constants';
import { type LimitsSettings, hasLimits } from './limits-settings';
import { createLimitsStorage } from './limits-storage';
import { RateLimiter } from './rate-limiter';
import { TenantRateLimitGuard } from './tenant-rate-limit.guard';

/**
 * Request rate limits: per tenant (an APP_GUARD) and per API token (consulted by the /v1 auth guard), on a
 * @nestjs/throttler storage. The server imports it only when limits are on, after AuthModule, so the tenant
 * guard runs after authentication and RBAC; with limits off nothing of it is on the request path.
 */
@Module({})
export class LimitsModule {
  static forRoot(settings: LimitsSettings): DynamicModule {
    const providers: Provider[] = [
      { provide: LIMITS_SETTINGS, useValue: settings },
      // A factory, so Nest runs the storage's lifecycle hooks (Redis connect and disconnect, the memory sweeper).
      { provide: LIMITS_STORAGE, useFactory: () => createLimitsStorage(settings.store) },
      RateLimiter,
    ];
    if (hasLimits(settings, 'tenant')) providers.push({ provide: APP_GUARD, useClass: TenantRateLimitGuard });
    const tokenLimits = hasLimits(settings, 'token');
    if (tokenLimits) providers.push({ provide: API_TOKEN_LIMITER, useClass: ApiTokenRateLimiter });
    return {
      module: LimitsModule,
      global: true,
      providers,
      exports: tokenLimits ? [API_TOKEN_LIMITER] : [],
    };
  }
}
