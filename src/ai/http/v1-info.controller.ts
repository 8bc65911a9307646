import { Controller, Get, Inject, Query, Req, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { packageVersion } from '../../common/packaged-files';
import { API_VERSION } from '../ai.constants';
import { AiClient } from '../client/ai-client';
import { ApiAuthGuard } from '../../http/api-auth.guard';
import { ModelsQueryDto } from './api-dtos';
import { ApiExceptionFilter } from '../../http/api-exception.filter';
import { apiBody } from './api-response';
import { createApiValidationPipe } from './api-validation.pipe';

/** Read-only discovery: versions, providers, models, capabilities, health. */
@Controller('v1')
@UseGuards(ApiAuthGuard)
@UseFilters(ApiExceptionFilter)
@UsePipes(createApiValidationPipe())
export class V1InfoController {
  private readonly version = packageVersion();

  constructor(@Inject(AiClient) private readonly client: AiClient) {}

  @Get('version')
  versionInfo(@Req() request: FastifyRequest) {
    return apiBody(request, { version: this.version, apiVersion: API_VERSION });
  }

  /** Settings without keys or other sensitive values. */
  @Get('providers')
  providers(@Req() request: FastifyRequest) {
    return apiBody(request, { defaultProvider: this.client.defaultProvider, providers: this.client.describeProviders() });
  }

  /**
   * `?provider=<name>` lists one provider (its failure is the response's error); without it, all of them. Only
   * the models the caller's allow-lists admit are listed.
   */
  @Get('models')
  async models(@Req() request: FastifyRequest, @Query() query: ModelsQueryDto) {
    const listing = await this.client.listModels(query.provider);
    const models = listing.models.filter((model) => this.client.admitsModel(model.provider, model.id));
    return apiBody(request, { models, errors: listing.errors });
  }

  @Get('capabilities')
  capabilities(@Req() request: FastifyRequest) {
    return apiBody(request, { providers: this.client.capabilities() });
  }

  /** Always 200 with a report: `healthy` when every provider is, `degraded` when some are, else `unhealthy`. */
  @Get('health')
  async health(@Req() request: FastifyRequest, @Query() query: ModelsQueryDto) {
    const results = query.provider !== undefined ? [await this.client.healthCheck(query.provider)] : await this.client.healthCheckAll();
    const healthy = results.filter((r) => r.status === 'healthy').length;
    const status = healthy === results.length && healthy > 0 ? 'healthy' : healthy > 0 ? 'degraded' : 'unhealthy';
    return apiBody(request, { status, providers: results });
  }
}
