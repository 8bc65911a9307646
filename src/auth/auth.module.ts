import {
  Logger,
  Module,
  type CanActivate,
  type DynamicModule,
  type FactoryProvider,
  type ModuleMetadata,
  type Provider,
  type Type,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { AuthModuleOptions, ResolvedAuthOptions } from './auth-module-options.interface';
import { MIN_HS_SECRET_BYTES, resolveAuthOptions } from './auth.options';
import { AUTH_OPTIONS, PERMISSIONS_STORE, RBAC_STORE } from './auth.constants';
import { JwtTenantGuard } from './jwt-tenant.guard';
import { RbacGuard } from './rbac/rbac.guard';
import { rbacProviders } from './rbac/rbac.providers';
import { RbacService } from './rbac/rbac.service';

/** Options given by the host's own providers (ConfigService, a secrets client, ...). */
export interface AuthModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: FactoryProvider['inject'];
  useFactory: (...args: any[]) => AuthModuleOptions | Promise<AuthModuleOptions>;
  /** Register both guards as APP_GUARD (default true). Here, not in the factory: it shapes the module. */
  global?: boolean;
}

/** Injection token of the options as the host gave them, before defaults and validation. */
const AUTH_MODULE_INPUT = Symbol('tollgate:auth-module-input');

function resolved(input: AuthModuleOptions): ResolvedAuthOptions {
  const options = resolveAuthOptions(input);
  if (options.allowWeakSecret && options.jwtAlgorithm.startsWith('HS') && options.verificationKey.symmetricKeySize! < MIN_HS_SECRET_BYTES) {
    new Logger('AuthModule').warn(
      `jwtSecret is shorter than ${MIN_HS_SECRET_BYTES} bytes (allowWeakSecret is on): tokens signed with it can be brute-forced`,
    );
  }
  return options;
}

/**
 * JWT authentication, two-level tenancy and RBAC for a Nest app on Fastify or Express.
 * Options are validated when the module starts; every bad option is named in one error.
 * The module is global, so `RbacService` and the guards can be injected (or used with `@UseGuards()`) anywhere.
 */
@Module({})
export class AuthModule {
  static forRoot(options: AuthModuleOptions): DynamicModule {
    const global = options?.global ?? true;
    // Known up front here: without RBAC, requests need not pass through a guard that only says yes.
    const guards = global ? (options?.rbacEnabled === true ? [JwtTenantGuard, RbacGuard] : [JwtTenantGuard]) : [];
    return AuthModule.build([{ provide: AUTH_MODULE_INPUT, useValue: options }], guards, []);
  }

  static forRootAsync(options: AuthModuleAsyncOptions): DynamicModule {
    const input: Provider = { provide: AUTH_MODULE_INPUT, useFactory: options.useFactory, inject: options.inject ?? [] };
    return AuthModule.build([input], options.global === false ? [] : [JwtTenantGuard, RbacGuard], options.imports ?? []);
  }

  /** `appGuards` in order: Nest runs APP_GUARDs in registration order, authentication first, then RBAC. */
  private static build(input: Provider[], appGuards: Type<CanActivate>[], imports: ModuleMetadata['imports']): DynamicModule {
    const guards: Provider[] = appGuards.map((guard) => ({ provide: APP_GUARD, useExisting: guard }));
    return {
      module: AuthModule,
      global: true,
      imports,
      providers: [
        ...input,
        { provide: AUTH_OPTIONS, useFactory: resolved, inject: [AUTH_MODULE_INPUT] },
        JwtTenantGuard,
        ...rbacProviders,
        ...guards,
      ],
      exports: [AUTH_OPTIONS, JwtTenantGuard, RbacGuard, RbacService, RBAC_STORE, PERMISSIONS_STORE],
    };
  }
}
