import { Body, Controller, Delete, Get, HttpCode, Put, Query, Req, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { apiBody } from '../../ai/http/api-response';
import { apiRequestError } from '../../http/api-error';
import { ApiExceptionFilter } from '../../http/api-exception.filter';
import { InvalidBudgetError } from './budget-errors';
import { type RuleSet, WILDCARD_ID, describeBudget } from './budget-rules';
import { BUDGET_PERIODS, type BudgetPeriod, SCOPE_KINDS, type ScopeKind } from './budget-scope';
import { BudgetsService } from './budgets.service';
import { ApiAuthGuard } from '../../http/api-auth.guard';
import { administeredTenant, assertAdministersRule, ruleWithinTenant } from '../admin-scope';
import { GovernanceAdminGuard } from '../governance-admin.guard';
import { governanceOf } from '../governance-identity';

const RULE_SCHEMA = {
  type: 'object',
  required: ['scope', 'id'],
  properties: {
    scope: { type: 'string', enum: [...SCOPE_KINDS] },
    id: { type: 'string', description: 'Caller id (sub_tenant: tenant/slug; subject: tenant/user, key:<key id> or api-token), or * for every caller of the scope' },
    usd: { type: 'number', minimum: 0, description: 'Dollars per period' },
    tokens: { type: 'integer', minimum: 0, description: 'Tokens per period' },
    period: { type: 'string', enum: [...BUDGET_PERIODS], description: 'Required with usd or tokens' },
    rpm: { type: 'integer', minimum: 0 },
    tpm: { type: 'integer', minimum: 0 },
  },
};

function describeRules(rules: RuleSet) {
  return { budgets: rules.budgets.map(describeBudget), limits: rules.limits };
}

/** The rules an administrator of `tenant` is shown: its own, and the `*` rules that bind it too. */
function rulesSeenBy(rules: RuleSet, tenant: string | undefined): RuleSet {
  if (tenant === undefined) return rules;
  const seen = (rule: { scope: ScopeKind; id: string }) => rule.id === WILDCARD_ID || ruleWithinTenant(rule.scope, rule.id, tenant);
  return { budgets: rules.budgets.filter(seen), limits: rules.limits.filter(seen) };
}

/**
 * Budgets and RPM/TPM set at run time; refused with 403 unless the caller is a governance admin. An
 * administrator of one tenant sees its tenant's rules and sets none (an operator sets rules).
 */
@ApiTags('admin')
@Controller('v1/admin/budgets')
@UseGuards(ApiAuthGuard, GovernanceAdminGuard)
@UseFilters(ApiExceptionFilter)
export class AdminBudgetsController {
  constructor(private readonly budgets: BudgetsService) {}

  @Get()
  @ApiOperation({ summary: 'Configured and run-time budgets and rate limits' })
  async list(@Req() request: FastifyRequest) {
    const { configured, runtime } = await this.budgets.listRules();
    const tenant = administeredTenant(governanceOf(request));
    return apiBody(request, { configured: describeRules(rulesSeenBy(configured, tenant)), runtime: describeRules(rulesSeenBy(runtime, tenant)) });
  }

  @Put()
  @ApiOperation({ summary: 'Set a budget (usd and/or tokens per period) and/or rpm/tpm of one scope; replaces the one it names' })
  @ApiBody({ schema: RULE_SCHEMA })
  async set(@Req() request: FastifyRequest, @Body() body: unknown) {
    const stored = await this.budgets.setRule(body, undefined, (scope, id) => assertAdministersRule(governanceOf(request), scope, id));
    return apiBody(request, { ...(stored.budget ? { budget: describeBudget(stored.budget) } : {}), ...(stored.limit ? { limit: stored.limit } : {}) });
  }

  @Delete()
  @HttpCode(200)
  @ApiOperation({ summary: 'Delete the run-time budget of one period, or every run-time rule of a scope and id' })
  @ApiQuery({ name: 'scope', enum: [...SCOPE_KINDS] })
  @ApiQuery({ name: 'id', type: String })
  @ApiQuery({ name: 'period', enum: [...BUDGET_PERIODS], required: false })
  async remove(@Req() request: FastifyRequest, @Query() query: Record<string, unknown>) {
    const problems: string[] = [];
    if (!(SCOPE_KINDS as readonly unknown[]).includes(query.scope)) problems.push(`scope: must be one of ${SCOPE_KINDS.join(', ')}, got ${JSON.stringify(query.scope)}`);
    if (typeof query.id !== 'string' || query.id === '') problems.push('id: is required');
    if (query.period !== undefined && !(BUDGET_PERIODS as readonly unknown[]).includes(query.period)) problems.push(`period: must be day or month, got ${JSON.stringify(query.period)}`);
    if (problems.length) throw new InvalidBudgetError(problems);
    assertAdministersRule(governanceOf(request), query.scope as ScopeKind, query.id as string);
    const deleted = await this.budgets.deleteRules(query.scope as ScopeKind, query.id as string, query.period as BudgetPeriod | undefined);
    if (deleted === 0) throw apiRequestError(404, `No run-time rule of ${String(query.scope)} ${String(query.id)}${query.period ? ` for period ${String(query.period)}` : ''}.`);
    return apiBody(request, { deleted });
  }
}
