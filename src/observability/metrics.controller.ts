import { Controller, Get, Header, Headers, Inject, Res, UnauthorizedException } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { bearerTokenMatches, SkipApiAuth } from '../http/api-auth.guard';
import { SkipAuth } from '../auth/auth.decorators';
import { MetricsService } from './metrics.service';
import { METRICS_TOKEN_SCHEME } from './openapi';
import { METRICS_SETTINGS, type MetricsSettings } from './metrics-settings';

/**
 * Prometheus scrape endpoint. Outside the JWT guard and the /v1 API hook: scrapers carry neither a user's
 * JWT nor the API token. `metrics.token` (METRICS_TOKEN) protects it with its own bearer token.
 */
@SkipAuth()
@SkipApiAuth()
@Controller()
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    @Inject(METRICS_SETTINGS) private readonly settings: MetricsSettings,
  ) {}

  // No credential, or metrics.token as a bearer token when one is configured.
  @ApiOperation({ summary: 'Prometheus metrics (text exposition format)', security: [{}, { [METRICS_TOKEN_SCHEME]: [] }] })
  @Get('metrics')
  @Header('cache-control', 'no-store')
  async scrape(@Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    if (this.settings.token !== undefined && !bearerTokenMatches(authorization, this.settings.token)) {
      throw new UnauthorizedException({ message: 'A valid metrics token is required.', tollgate: true });
    }
    reply.type(this.metrics.contentType);
    return this.metrics.render();
  }
}
