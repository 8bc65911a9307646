/**
 * The measure-and-record stage of the call path: each attempt's model-call record for the sink (the governance
 * ledger), built only when a sink is set. A stream that opened is recorded when it ends (stream-relay.ts).
 */
import { CapabilityNotSupportedError, InvalidResponseError } from '../errors';
import type { AiProvider, EmbedRequest, EmbedResult, GenerateRequest, GenerateResult, GenerateStreamChunk, TokenUsage } from '../providers/ai-provider.interface';
import { configuredModel } from './call-features';
import { measuredUsage, messageChars, type ModelCallOperation, type ModelCallSink, type ModelCallStatus, toolCallChars } from './model-call';
import { wentUnanswered } from './sent-attempts';

/** A provider stream whose first chunk has arrived: the point after which no retry or fallback happens. */
export interface OpenedStream {
  first: GenerateStreamChunk;
  rest: AsyncIterator<GenerateStreamChunk>;
}

export class CallRecorder {
  /** Where records go; unset, no record is built. */
  sink?: ModelCallSink;

  /** One generation attempt, recorded when a sink is set. */
  async generate(provider: AiProvider, request: GenerateRequest): Promise<GenerateResult> {
    const sink = this.sink;
    if (!sink) return provider.generate(request);
    const sent = new SentFlag(request.onSent);
    try {
      const result = await provider.generate({ ...request, onSent: sent.mark });
      const received = result.text.length + toolCallChars(result.toolCalls);
      recordCall(sink, provider, result.model, 'generate', 'ok', result.usage, messageChars(request.messages), received);
      return result;
    } catch (error) {
      recordFailure(sink, provider, configuredModel(provider, request.model, 'chatModel'), 'generate', error, request.signal, sent.value, messageChars(request.messages));
      throw error;
    }
  }

  /** Opening one stream attempt: only a failure is recorded here; a stream that opened is recorded when it ends. */
  async open(provider: AiProvider, request: GenerateRequest): Promise<OpenedStream> {
    const sink = this.sink;
    if (!sink) return openStream(provider, request);
    const sent = new SentFlag(request.onSent);
    try {
      return await openStream(provider, { ...request, onSent: sent.mark });
    } catch (error) {
      recordFailure(sink, provider, configuredModel(provider, request.model, 'chatModel'), 'stream', error, request.signal, sent.value, messageChars(request.messages));
      throw error;
    }
  }

  async embed(provider: AiProvider, request: EmbedRequest): Promise<EmbedResult> {
    const sink = this.sink;
    if (!sink) return provider.embed(request);
    const sentChars = request.inputs.reduce((sum, text) => sum + text.length, 0);
    const sent = new SentFlag(request.onSent);
    try {
      const result = await provider.embed({ ...request, onSent: sent.mark });
      recordCall(sink, provider, result.model, 'embed', 'ok', result.usage, sentChars, 0);
      return result;
    } catch (error) {
      recordFailure(sink, provider, configuredModel(provider, request.model, 'embeddingModel'), 'embed', error, request.signal, sent.value, sentChars);
      throw error;
    }
  }
}

/** Reads up to the first chunk, so a failure to connect, a refusal or an empty stream counts as the attempt failing. */
export async function openStream(provider: AiProvider, request: GenerateRequest): Promise<OpenedStream> {
  if (!provider.generateStream) {
    throw new CapabilityNotSupportedError(`${provider.name}: ${provider.kind} does not support streaming generation`, {
      provider: provider.name,
    });
  }
  const rest = provider.generateStream(request)[Symbol.asyncIterator]();
  const first = await rest.next();
  if (first.done) throw new InvalidResponseError(`${provider.name}: upstream stream ended without any chunk`, { provider: provider.name });
  return { first: first.value, rest };
}

/** Whether an attempt's request went out upstream, passing the news on to the caller's own `onSent`. */
class SentFlag {
  value = false;
  constructor(private readonly onSent: (() => void) | undefined) {}
  readonly mark = (): void => {
    this.value = true;
    this.onSent?.();
  };
}

/**
 * A failed attempt, recorded as the budget charges it (sent-attempts.ts): one that went out and got no answer
 * (the caller left, a timeout or dropped connection, an unreadable answer) with its input estimated, since the
 * upstream may have read the prompt and billed it; an error the upstream answered with, with no tokens. An
 * attempt that never went out (a refused connection, a capability refusal) never reached a model.
 */
function recordFailure(
  sink: ModelCallSink,
  provider: AiProvider,
  model: string,
  operation: ModelCallOperation,
  error: unknown,
  signal: AbortSignal | undefined,
  sent: boolean,
  sentChars: number,
): void {
  if (signal?.aborted) {
    recordCall(sink, provider, model, operation, 'aborted', undefined, sentChars, 0);
    return;
  }
  if (error instanceof CapabilityNotSupportedError) return;
  if (!wentUnanswered(error, signal)) recordCall(sink, provider, model, operation, 'error', { inputTokens: 0, outputTokens: 0 }, 0, 0);
  else if (sent) recordCall(sink, provider, model, operation, 'error', undefined, sentChars, 0);
}

export function recordCall(
  sink: ModelCallSink,
  provider: AiProvider,
  model: string,
  operation: ModelCallOperation,
  status: ModelCallStatus,
  reported: TokenUsage | undefined,
  sentChars: number,
  receivedChars: number,
): void {
  const { usage, estimated } = measuredUsage(reported, sentChars, receivedChars);
  // A failing sink must not turn a model call into a failure.
  try {
    sink({ provider: provider.name, providerKind: provider.kind, model, operation, status, usage, estimated });
  } catch {
    // The sink owns its errors.
  }
}
