import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { SkipAuth } from '../auth/auth.decorators';
import { ReadinessService } from './readiness.service';

/** Probes for orchestrators: always public, never touch the token. */
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** Liveness: the process serves HTTP. */
  @SkipAuth()
  @ApiOperation({ summary: 'Liveness: 200 whenever the process serves HTTP', security: [] })
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: every registered dependency answers; 503 otherwise. */
  @SkipAuth()
  @ApiOperation({ summary: 'Readiness: 200 when every registered check passes, else 503', security: [] })
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) reply: FastifyReply): Promise<{ status: string; checks: Record<string, string> }> {
    const report = await this.readiness.report();
    reply.status(report.ready ? 200 : 503);
    return { status: report.ready ? 'ready' : 'not_ready', checks: report.checks };
  }
}
