/**
 * A stream that opened, relayed to the caller as events: text and tool-call deltas, then one `done` naming who
 * answered. When it stops, however it stops, the upstream request is ended, the model-call record is handed to the
 * sink in the caller's context, and the gate's ticket is closed with what the stream cost.
 */
import { AsyncResource } from 'node:async_hooks';
import { InvalidResponseError } from '../errors';
import type { AiProvider, GenerateRequest, GenerateStreamChunk, NativeEvent, TokenUsage, ToolCallDelta } from '../providers/ai-provider.interface';
import { type Admission, answeredBy } from './call-admission';
import { configuredModel } from './call-features';
import { type OpenedStream, recordCall } from './call-recording';
import { messageChars, type ModelCallSink, type ModelCallStatus, toolCallChars } from './model-call';

/**
 * What a streamed generation yields: text and tool-call deltas, then exactly one `done` naming who answered;
 * `native` carries the upstream's own events when the call went in its dialect.
 */
export type GenerateStreamEvent =
  | { type: 'delta'; text: string; toolCalls?: ToolCallDelta[]; native?: NativeEvent[] }
  | { type: 'done'; provider: string; model: string; finishReason?: string; usage?: TokenUsage; native?: NativeEvent[] };

export interface RelayedStream {
  opened: OpenedStream;
  provider: AiProvider;
  /** The request the answering attempt was sent. */
  sent: GenerateRequest | undefined;
  admission: Admission;
  sink: ModelCallSink | undefined;
  signal: AbortSignal | undefined;
  /** Called once when the stream stops, however, with the usage its end reported (the deployment's call in flight ends). */
  onEnd?: (usage: TokenUsage | undefined) => void;
}

export async function* relayStream({ opened, provider, sent, admission, sink, signal, onEnd }: RelayedStream): AsyncGenerator<GenerateStreamEvent> {
  const { rest } = opened;
  const { ticket, attempts } = admission;
  // Taken at the first read, so the record reaches the sink in the caller's context even from a disconnect.
  // An async scope of its own rather than AsyncLocalStorage.snapshot(), whose bind costs a deprecation wrapper per call on Node 20.
  const callerScope = sink ? new AsyncResource('TollgateModelStream') : undefined;
  let status: ModelCallStatus = 'aborted';
  let receivedChars = 0;
  let last: GenerateStreamChunk | undefined;
  try {
    let chunk = opened.first;
    while (!chunk.done) {
      if (sink || ticket) receivedChars += chunk.text.length + toolCallChars(chunk.toolCalls);
      const delta: GenerateStreamEvent = chunk.toolCalls?.length ? { type: 'delta', text: chunk.text, toolCalls: chunk.toolCalls } : { type: 'delta', text: chunk.text };
      if (chunk.native) delta.native = chunk.native;
      yield delta;
      const next = await rest.next();
      if (next.done) throw new InvalidResponseError(`${provider.name}: upstream stream ended without a completion marker`, { provider: provider.name });
      chunk = next.value;
    }
    last = chunk;
    status = 'ok';
    yield {
      type: 'done',
      provider: provider.name,
      model: chunk.model,
      ...(chunk.finishReason !== undefined ? { finishReason: chunk.finishReason } : {}),
      ...(chunk.usage !== undefined ? { usage: chunk.usage } : {}),
      ...(chunk.native ? { native: chunk.native } : {}),
    };
  } catch (error) {
    if (!signal?.aborted) status = 'error';
    throw error;
  } finally {
    try {
      // Ends the upstream request when the consumer stops early; a no-op once the adapter has finished.
      await rest.return?.();
    } finally {
      onEnd?.(last?.done ? last.usage : undefined);
      if (sent && (sink || ticket)) {
        const request = sent;
        const model = last?.done ? last.model : configuredModel(provider, request.model, 'chatModel');
        const usage = last?.done ? last.usage : undefined;
        if (sink && callerScope) callerScope.runInAsyncScope(() => recordCall(sink, provider, model, 'stream', status, usage, messageChars(request.messages), receivedChars));
        // A stream stopped before its end still cost what the upstream read and wrote: at least the estimate.
        if (ticket && attempts) {
          const answered = answeredBy(provider, model, usage, messageChars(request.messages), receivedChars);
          ticket.close(last?.done ? attempts.outcome(answered) : attempts.outcome(undefined, { provider: provider.name, providerKind: provider.kind, model, measured: answered.usage }));
        }
      }
    }
  }
}
