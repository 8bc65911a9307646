/**
 * What one gated call sent upstream, attempt by attempt (retries and fallback candidates included), for the
 * outcome its gate ticket is closed with: a reservation is given back only when no request went out, and an
 * attempt that went out and got no answer is charged (docs/governance.md#reserve-then-settle).
 */
import { ConnectionError, InvalidResponseError, TollgateError } from '../errors';
import type { AiProvider } from '../providers/ai-provider.interface';
import type { CalledModel, GateOutcome } from './model-call-gate';
import type { ModelCallUsage } from './model-call';

/** What one attempt is sent with beyond the request: where it reports going upstream, and the budget's max_tokens. */
export interface AttemptOptions {
  onSent?: () => void;
  maxTokens?: number;
}

export class SentAttempts {
  private sent = false;
  private readonly unanswered: Array<CalledModel & { measured?: ModelCallUsage }> = [];

  constructor(
    private readonly maxTokens: number | undefined,
    private readonly modelOf: (provider: AiProvider, model: string | undefined) => string,
  ) {}

  /** Runs one attempt; when its request went out and it failed without an answer, the attempt is remembered. */
  async run<T>(provider: AiProvider, model: string | undefined, signal: AbortSignal | undefined, attempt: (options: AttemptOptions) => Promise<T>): Promise<T> {
    let sent = false;
    const onSent = () => {
      sent = true;
      this.sent = true;
    };
    try {
      return await attempt(this.maxTokens === undefined ? { onSent } : { onSent, maxTokens: this.maxTokens });
    } catch (error) {
      if (sent && wentUnanswered(error, signal)) this.unanswered.push({ provider: provider.name, providerKind: provider.kind, model: this.modelOf(provider, model) });
      throw error;
    }
  }

  /** The call's outcome: `answered` when a model answered, `cut` for a stream that stopped before its end. */
  outcome(answered?: GateOutcome['answered'], cut?: CalledModel & { measured: ModelCallUsage }): GateOutcome {
    return { sent: this.sent, ...(answered ? { answered } : {}), unanswered: cut ? [...this.unanswered, cut] : this.unanswered };
  }
}

/**
 * A failure after the request went out that is not the upstream's own refusal (an error status it answered
 * with, which providers do not bill): the caller left, a timeout or dropped connection, an unreadable answer,
 * or a refusal of one request among several sent at once whose siblings went out (`othersSent`). The upstream
 * may have read the whole prompt and written an answer.
 */
export function wentUnanswered(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted === true || error instanceof ConnectionError || error instanceof InvalidResponseError) return true;
  return !(error instanceof TollgateError) || error.othersSent === true;
}
