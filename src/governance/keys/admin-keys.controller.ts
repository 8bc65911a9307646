import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { ApiCreatedResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { apiBody } from '../../ai/http/api-response';
import { createApiValidationPipe } from '../../ai/http/api-validation.pipe';
import { ApiAuthGuard } from '../../http/api-auth.guard';
import { ApiExceptionFilter } from '../../http/api-exception.filter';
import { administeredTenant, assertAdministers } from '../admin-scope';
import { GovernanceAdminGuard } from '../governance-admin.guard';
import { KeyNotFoundError } from '../governance-errors';
import { governanceOf } from '../governance-identity';
import { CreateKeyDto, UpdateKeyDto } from './admin-keys.dto';
import { type KeySpec, publicKeyView, restFieldLabel } from './api-key-record';
import { KeysService } from './keys.service';

const KEY_VIEW_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string', example: '3f9a0c1b2d4e' },
    name: { type: 'string', nullable: true },
    tenant: { type: 'string' },
    sub_tenant: { type: 'string', nullable: true },
    models: { type: 'array', items: { type: 'string' }, nullable: true },
    budget: {
      type: 'object',
      nullable: true,
      properties: { period: { type: 'string', enum: ['day', 'month'] }, usd: { type: 'number' }, tokens: { type: 'integer' } },
    },
    rpm: { type: 'integer', nullable: true },
    tpm: { type: 'integer', nullable: true },
    expires_at: { type: 'string', format: 'date-time', nullable: true },
    created_at: { type: 'string', format: 'date-time' },
    revoked_at: { type: 'string', format: 'date-time', nullable: true },
    status: { type: 'string', enum: ['active', 'revoked', 'expired'] },
    request_id: { type: 'string' },
  },
};

function specOf(body: UpdateKeyDto & Partial<CreateKeyDto>): KeySpec {
  return {
    name: body.name,
    tenant: body.tenant,
    subTenant: body.sub_tenant,
    models: body.models,
    budgetUsd: body.budget_usd,
    budgetTokens: body.budget_tokens,
    period: body.period,
    rpm: body.rpm,
    tpm: body.tpm,
    expires: body.expires,
  };
}

/**
 * API keys, administered over REST (docs/governance.md): the admin token or a JWT with an operator role for
 * every tenant, a JWT with an admin role for its own tenant's keys (another tenant's key is 404, as an unknown
 * one). The key itself is in the 201 answer to POST and nowhere else, ever.
 */
@ApiTags('admin')
@ApiForbiddenResponse({ description: 'forbidden: the caller is neither the admin token nor a JWT with an admin or operator role, or an admin of one tenant named another' })
@Controller('v1/admin/keys')
@UseGuards(ApiAuthGuard, GovernanceAdminGuard)
@UseFilters(ApiExceptionFilter)
@UsePipes(createApiValidationPipe())
export class AdminKeysController {
  constructor(@Inject(KeysService) private readonly keys: KeysService) {}

  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({ description: 'The new key (`key`, shown this once) and its settings', schema: { ...KEY_VIEW_SCHEMA, properties: { key: { type: 'string' }, ...KEY_VIEW_SCHEMA.properties } } })
  async create(@Req() request: FastifyRequest, @Body() body: CreateKeyDto) {
    assertAdministers(governanceOf(request), body.tenant, 'tenant');
    const { key, record } = await this.keys.create(specOf(body), restFieldLabel);
    return apiBody(request, { key, ...publicKeyView(record, Date.now()) });
  }

  @Get()
  @ApiQuery({ name: 'tenant', required: false, description: 'Only this tenant’s keys (an administrator of one tenant: its own, the default)' })
  @ApiOkResponse({ description: 'Every key, oldest first (never a key or its hash)', schema: { type: 'object', properties: { keys: { type: 'array', items: KEY_VIEW_SCHEMA } } } })
  async list(@Req() request: FastifyRequest, @Query('tenant') tenant?: string) {
    const state = governanceOf(request);
    if (tenant !== undefined) assertAdministers(state, tenant, 'tenant');
    const scope = administeredTenant(state) ?? tenant;
    const now = Date.now();
    const records = await this.keys.list(scope === undefined ? {} : { tenant: scope });
    return { keys: records.map((record) => publicKeyView(record, now)), request_id: String(request.id) };
  }

  @Get(':id')
  @ApiOkResponse({ description: 'One key’s settings and status', schema: KEY_VIEW_SCHEMA })
  @ApiNotFoundResponse({ description: 'key_not_found' })
  async show(@Req() request: FastifyRequest, @Param('id') id: string) {
    return apiBody(request, publicKeyView(await this.administeredKey(request, id), Date.now()));
  }

  @Patch(':id')
  @ApiOkResponse({ description: 'The key after the change; null clears a setting', schema: KEY_VIEW_SCHEMA })
  @ApiNotFoundResponse({ description: 'key_not_found' })
  async update(@Req() request: FastifyRequest, @Param('id') id: string, @Body() body: UpdateKeyDto) {
    await this.administeredKey(request, id);
    return apiBody(request, publicKeyView(await this.keys.update(id, specOf(body), restFieldLabel), Date.now()));
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOkResponse({ description: 'The revoked key; every server refuses it within a second', schema: KEY_VIEW_SCHEMA })
  @ApiNotFoundResponse({ description: 'key_not_found' })
  async revoke(@Req() request: FastifyRequest, @Param('id') id: string) {
    await this.administeredKey(request, id);
    return apiBody(request, publicKeyView(await this.keys.revoke(id), Date.now()));
  }

  /** The key, when the caller administers its tenant; another tenant's key is as unknown as a missing one (404). */
  private async administeredKey(request: FastifyRequest, id: string) {
    const own = administeredTenant(governanceOf(request));
    const record = await this.keys.get(id);
    if (own !== undefined && record.tenant !== own) throw new KeyNotFoundError(id);
    return record;
  }
}
