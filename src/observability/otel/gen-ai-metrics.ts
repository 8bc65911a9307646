/**
 * The GenAI semantic conventions' metrics, recorded per upstream attempt: tokens by type, the time Tollgate took
 * to serve the model call (gen_ai.server.request.duration: Tollgate is the GenAI server its callers talk to) and
 * a stream's time to its first chunk. Exported over OTLP with the traces.
 */
import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { DURATION_BUCKETS, GEN_AI, GEN_AI_METRICS, TOKEN_BUCKETS, TTFT_BUCKETS } from './gen-ai-conventions';

export class GenAiMetrics {
  private readonly tokenUsage: Histogram;
  private readonly serverDuration: Histogram;
  private readonly firstToken: Histogram;

  constructor(meter: Meter) {
    this.tokenUsage = meter.createHistogram(GEN_AI_METRICS.tokenUsage, {
      description: 'Tokens used per upstream attempt, by gen_ai.token.type (input, output)',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.serverDuration = meter.createHistogram(GEN_AI_METRICS.serverRequestDuration, {
      description: 'Time Tollgate took to serve each model call attempt',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.firstToken = meter.createHistogram(GEN_AI_METRICS.serverTimeToFirstToken, {
      description: 'Time from the start of a streamed attempt to its first chunk',
      unit: 's',
      advice: { explicitBucketBoundaries: TTFT_BUCKETS },
    });
  }

  tokens(input: number | undefined, output: number | undefined, attributes: Attributes): void {
    if (input !== undefined) this.tokenUsage.record(input, { ...attributes, [GEN_AI.tokenType]: 'input' });
    if (output !== undefined) this.tokenUsage.record(output, { ...attributes, [GEN_AI.tokenType]: 'output' });
  }

  duration(seconds: number, attributes: Attributes): void {
    this.serverDuration.record(seconds, attributes);
  }

  timeToFirstToken(seconds: number, attributes: Attributes): void {
    this.firstToken.record(seconds, attributes);
  }
}
