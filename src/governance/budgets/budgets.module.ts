import { type DynamicModule, Module } from '@nestjs/common';
import { AdminBudgetsController } from './admin-budgets.controller';
import { createBudgetEngine } from './budget-engine.factory';
import { createBudgetRuleStore } from './budget-rule-store.factory';
import { BUDGETS_SETTINGS, BUDGET_ENGINE, BUDGET_RULE_STORE } from './budgets.constants';
import { BudgetsService } from './budgets.service';
import type { BudgetsSettings } from './budgets-settings';

/**
 * Budgets and RPM/TPM of model calls (BudgetsService) and their admin routes. The counter and rule stores
 * connect before the server listens; BudgetsService closes both at shutdown.
 */
@Module({})
export class BudgetsModule {
  static forRoot(settings: BudgetsSettings): DynamicModule {
    return {
      module: BudgetsModule,
      controllers: [AdminBudgetsController],
      providers: [
        { provide: BUDGETS_SETTINGS, useValue: settings },
        { provide: BUDGET_ENGINE, useFactory: () => createBudgetEngine(settings.store) },
        { provide: BUDGET_RULE_STORE, useFactory: () => createBudgetRuleStore(settings) },
        BudgetsService,
      ],
      exports: [BudgetsService],
    };
  }
}
