import { Controller, Get, Inject, Query, Req, UseFilters, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiQuery } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { apiBody } from '../../ai/http/api-response';
import { ApiAuthGuard } from '../../http/api-auth.guard';
import { apiRequestError } from '../../http/api-error';
import { ApiExceptionFilter } from '../../http/api-exception.filter';
import { governanceOf } from '../governance-identity';
import { LedgerService } from './ledger.service';
import { microsToUsd } from './pricing';
import { emptyRow, USAGE_GROUPS, type UsageRow, UsageQueryError } from './usage-query';
import { type UsageParams, usageQueryFor, UsageScopeError } from './usage-request';

/** GET /v1/usage: the ledger's sums for the caller's tenant (every tenant for an operator). */
@Controller('v1')
@UseGuards(ApiAuthGuard)
@UseFilters(ApiExceptionFilter)
export class UsageController {
  constructor(@Inject(LedgerService) private readonly ledger: LedgerService) {}

  @Get('usage')
  @ApiOperation({ summary: "Tokens and cost of model calls over a time range, grouped; a caller sees its own tenant, an operator (admin token, operator role) every tenant" })
  @ApiQuery({ name: 'from', required: false, description: 'Start, inclusive: YYYY-MM-DD (UTC), a date-time with an offset, or epoch ms; default 7 days before `to`' })
  @ApiQuery({ name: 'to', required: false, description: 'End, exclusive; default now' })
  @ApiQuery({ name: 'group_by', required: false, enum: USAGE_GROUPS, description: 'Default day (UTC)' })
  @ApiQuery({ name: 'tenant', required: false, description: 'Operators only: one tenant instead of all' })
  async usage(@Req() request: FastifyRequest, @Query() params: UsageParams) {
    const query = toQuery(params, request);
    const rows = await this.ledger.usage(query);
    return apiBody(request, {
      from: new Date(query.from).toISOString(),
      to: new Date(query.to).toISOString(),
      groupBy: query.groupBy,
      tenant: query.tenant ?? null,
      rows: rows.map(toApiRow),
      totals: toApiRow(totalOf(rows)),
    });
  }
}

function toQuery(params: UsageParams, request: FastifyRequest) {
  try {
    return usageQueryFor(params, governanceOf(request), Date.now());
  } catch (error) {
    if (error instanceof UsageQueryError) throw apiRequestError(400, error.message);
    if (error instanceof UsageScopeError) throw apiRequestError(403, error.message);
    throw error;
  }
}

/** Dollars on the wire (docs/governance.md); `costUsd` sums the priced calls, `unpricedCalls` counts the others. */
function toApiRow(row: UsageRow) {
  const { costMicros, ...rest } = row;
  return { ...rest, costUsd: microsToUsd(costMicros) };
}

function totalOf(rows: readonly UsageRow[]): UsageRow {
  const total = emptyRow(null);
  for (const row of rows) {
    total.calls += row.calls;
    total.inputTokens += row.inputTokens;
    total.outputTokens += row.outputTokens;
    total.cachedTokens += row.cachedTokens;
    total.costMicros += row.costMicros;
    total.unpricedCalls += row.unpricedCalls;
    total.estimatedCalls += row.estimatedCalls;
  }
  return total;
}
