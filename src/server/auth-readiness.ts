import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { RbacService } from '../auth/rbac/rbac.service';
import { ReadinessService } from './readiness.service';

/** With RBAC on, the server is ready only when both stores answer and the record is valid (docs/decisions.md A8). */
@Injectable()
export class AuthReadiness implements OnModuleInit {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    const rbac = this.moduleRef.get(RbacService, { strict: false });
    this.readiness.register('rbac', async () => {
      const health = await rbac.checkStore();
      if (!health.ready) {
        const state = `rbac store ${health.rbacStore}, permissions store ${health.permissionsStore}, record ${health.record}`;
        throw Object.assign(new Error('RBAC not ready'), { code: state });
      }
    });
  }
}
