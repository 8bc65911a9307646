/**
 * The attempt stage of the call path: one provider asked with retries (retry.ts's policy), each try published as
 * a `service.request` event (docs/decisions.md B2, B6).
 */
import type { AiProvider } from '../providers/ai-provider.interface';
import { callWithRetry, type RetryPolicy, type Sleep } from './retry';
import type { ServiceOperation, ServiceRequestPublisher } from './service-request.events';

/** Test seams: the wait between retries and the jitter source. */
export interface RetrySeams {
  sleep?: Sleep;
  random?: () => number;
}

export class RetriedAttempts {
  constructor(
    private readonly publisher: ServiceRequestPublisher,
    private readonly policy: RetryPolicy,
    private readonly seams: RetrySeams = {},
  ) {}

  /**
   * `call` tried, then retried per the policy unless `giveUp` says a failure ends the attempt; every try is one
   * `service.request` event.
   */
  run<T>(provider: AiProvider, operation: ServiceOperation, signal: AbortSignal | undefined, call: () => Promise<T>, giveUp?: (error: unknown) => boolean): Promise<T> {
    return callWithRetry(
      (attempt) => this.publisher.track({ provider: provider.name, operation, attempt }, call),
      this.policy,
      { sleep: this.seams.sleep, random: this.seams.random, signal, giveUp },
    );
  }
}
