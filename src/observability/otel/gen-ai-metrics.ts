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

  tokens(input: number | undefined, output: number | undefined, attributes: AnsweredMetricAttributes): void {
    if (input !== undefined) this.tokenUsage.record(input, attributes.inputTokens);
    if (output !== undefined) this.tokenUsage.record(output, attributes.outputTokens);
  }

  duration(seconds: number, attributes: Attributes): void {
    this.serverDuration.record(seconds, attributes);
  }

  timeToFirstToken(seconds: number, attributes: Attributes): void {
    this.firstToken.record(seconds, attributes);
  }
}

/** What an answered attempt's records carry: the answering model, and the token type for the token usage. */
export interface AnsweredMetricAttributes {
  readonly duration: Attributes;
  readonly inputTokens: Attributes;
  readonly outputTokens: Attributes;
}

/** Models remembered per set before the set starts afresh: a pass-through provider's callers may name any model. */
const MAX_REMEMBERED_MODELS = 64;

/**
 * The attribute objects of one operation, provider and requested model, made once and shared by every attempt
 * with them rather than copied for each record (the SDK hashes the attributes of every record as it is).
 */
export class ModelMetricAttributes {
  readonly requested: Attributes;
  private readonly answered = new Map<string, AnsweredMetricAttributes>();

  constructor(operation: string, providerName: string, requestModel: string) {
    this.requested = { [GEN_AI.operationName]: operation, [GEN_AI.providerName]: providerName, [GEN_AI.requestModel]: requestModel };
  }

  answeredBy(responseModel: string): AnsweredMetricAttributes {
    let attributes = this.answered.get(responseModel);
    if (attributes) return attributes;
    const duration = { ...this.requested, [GEN_AI.responseModel]: responseModel };
    attributes = { duration, inputTokens: { ...duration, [GEN_AI.tokenType]: 'input' }, outputTokens: { ...duration, [GEN_AI.tokenType]: 'output' } };
    if (this.answered.size >= MAX_REMEMBERED_MODELS) this.answered.clear();
    this.answered.set(responseModel, attributes);
    return attributes;
  }
}

/** ModelMetricAttributes by requested model, for one operation of one provider. */
export class MetricAttributeSets {
  private readonly byModel = new Map<string, ModelMetricAttributes>();

  constructor(
    private readonly operation: string,
    private readonly providerName: string,
  ) {}

  of(requestModel: string): ModelMetricAttributes {
    let sets = this.byModel.get(requestModel);
    if (sets) return sets;
    sets = new ModelMetricAttributes(this.operation, this.providerName, requestModel);
    if (this.byModel.size >= MAX_REMEMBERED_MODELS) this.byModel.clear();
    this.byModel.set(requestModel, sets);
    return sets;
  }
}
