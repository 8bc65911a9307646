import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AiClient } from '../ai/client/ai-client';
import { ReadinessService } from './readiness.service';

/**
 * Ready when at least one provider is ready (docs/decisions.md B3). Health results are reused for the
 * configured cache time, so probes never fan out into provider calls.
 */
@Injectable()
export class AiReadiness implements OnModuleInit {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly client: AiClient,
  ) {}

  onModuleInit(): void {
    this.readiness.register('providers', async () => {
      const results = await this.client.cachedHealth();
      if (!results.some((result) => result.ready)) {
        const states = results.map((result) => `${result.provider} ${result.status}`).join(', ') || 'none registered';
        throw Object.assign(new Error('no provider ready'), { code: states });
      }
    });
    // The deployments of aliases that have them, by state: what a cooling one waits for, never why it failed.
    this.readiness.registerDetails('deployments', () => {
      const deployments = this.client.deploymentStatus();
      if (deployments.length === 0) return undefined;
      return deployments.map(({ alias, deployment, state, retryAfterSeconds, inFlight }) => ({
        alias,
        deployment,
        state,
        ...(retryAfterSeconds !== undefined ? { retry_after_seconds: retryAfterSeconds } : {}),
        in_flight: inFlight,
      }));
    });
  }
}
