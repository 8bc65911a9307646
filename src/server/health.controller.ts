import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { SkipAuth } from '../auth/auth.decorators';
import { DescriptorLiveness } from './descriptor-liveness';
import { ReadinessService } from './readiness.service';

/** Probes for orchestrators: always public, never touch the token. */
@Controller()
export class HealthController {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly descriptors: DescriptorLiveness,
  ) {}

  /** Liveness: the process serves HTTP and can still open sockets (503 once it hit its descriptor limit). */
  @SkipAuth()
  @ApiOperation({ summary: 'Liveness: 200 while the process serves HTTP and can open sockets, else 503', security: [] })
  @Get('healthz')
  healthz(@Res({ passthrough: true }) reply: FastifyReply): { status: 'ok' } | { status: 'failing'; checks: { file_descriptors: 'exhausted' } } {
    if (!this.descriptors.exhausted()) return { status: 'ok' };
    reply.status(503);
    return { status: 'failing', checks: { file_descriptors: 'exhausted' } };
  }

  /** Readiness: every registered dependency answers; 503 otherwise. */
  @SkipAuth()
  @ApiOperation({ summary: 'Readiness: 200 when every registered check passes, else 503', security: [] })
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) reply: FastifyReply): Promise<{ status: string; checks: Record<string, string>; details?: Record<string, unknown> }> {
    const report = await this.readiness.report();
    reply.status(report.ready ? 200 : 503);
    return { status: report.ready ? 'ready' : 'not_ready', checks: report.checks, ...(report.details ? { details: report.details } : {}) };
  }
}
