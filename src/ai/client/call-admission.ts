/**
 * The gate stage of the call path: what governance's gate (model-call-gate.ts) is told about a call before it is
 * made, the ticket it answers with, and the watch on every attempt of the call (SentAttempts) that the ticket is
 * closed with. Without a gate nothing here runs.
 */
import type { AiProvider, ChatMessage, GenerateRequest, NativeRequest, TokenUsage } from '../providers/ai-provider.interface';
import { configuredModel } from './call-features';
import { measuredUsage, type ModelCallOperation, requestInputTokens } from './model-call';
import type { GatedCall, GateOutcome, GateTicket, ModelCallGate } from './model-call-gate';
import { type AttemptOptions, SentAttempts } from './sent-attempts';

/** What the gate is told about a call before it is made; `inputTokens` estimates what a provider would be sent. */
export interface GateRequest {
  operation: ModelCallOperation;
  setting: 'chatModel' | 'embeddingModel';
  inputTokens: (provider: AiProvider) => number;
  maxOutputTokens?: number;
  /** The caller's request in a provider's dialect, whose least max_tokens binds a provider that sends it as written. */
  native?: NativeRequest;
}

/** An admitted call: the gate's ticket and the watch on its attempts (both unset for an ungated call). */
export interface Admission {
  ticket?: GateTicket;
  attempts?: SentAttempts;
}

/** An ungated call's attempts: nothing watches them go out, and the caller's max_tokens stands. */
export const UNGATED_ATTEMPT: AttemptOptions = Object.freeze({});

const UNGATED: Admission = Object.freeze({});

export function chatGate(
  operation: ModelCallOperation,
  request: Pick<GenerateRequest, 'tools' | 'responseFormat' | 'maxTokens' | 'native'>,
  messagesFor: (provider: AiProvider) => ChatMessage[],
): GateRequest {
  return {
    operation,
    setting: 'chatModel',
    inputTokens: (provider) => requestInputTokens(messagesFor(provider), request),
    maxOutputTokens: request.maxTokens,
    ...(request.native?.leastMaxTokens !== undefined ? { native: request.native } : {}),
  };
}

/**
 * Opens the gate for the routed provider and model: refuses (throws or rejects) or admits. Synchronous for a
 * gate that reserves nothing, so such a call awaits no promise.
 */
export function admit(gate: ModelCallGate | undefined, provider: AiProvider, model: string | undefined, gated: GateRequest | undefined): Admission | Promise<Admission> {
  if (!gate || !gated) return UNGATED;
  const opened = gate.open(gatedCall(provider, model, gated));
  return opened instanceof Promise ? opened.then((ticket) => watched(ticket, gated)) : watched(opened, gated);
}

function watched(ticket: GateTicket | undefined, gated: GateRequest): Admission {
  if (!ticket) return UNGATED;
  return { ticket, attempts: new SentAttempts(ticket.maxOutputTokens, (provider, model) => configuredModel(provider, model, gated.setting)) };
}

/** Closes the ticket of a call that ended without an answer (every candidate failed, or it was refused). */
export function closeUnanswered(admission: Admission): void {
  if (admission.ticket && admission.attempts) admission.ticket.close(admission.attempts.outcome());
}

function gatedCall(provider: AiProvider, model: string | undefined, gated: GateRequest): GatedCall {
  const { native } = gated;
  const least = native?.leastMaxTokens !== undefined && provider.speaksNative?.(native.dialect, model) === true ? native.leastMaxTokens : undefined;
  return {
    provider: provider.name,
    providerKind: provider.kind,
    model: configuredModel(provider, model, gated.setting),
    operation: gated.operation,
    estimateInputTokens: () => gated.inputTokens(provider),
    ...(gated.maxOutputTokens !== undefined ? { maxOutputTokens: gated.maxOutputTokens } : {}),
    ...(least !== undefined ? { leastOutputTokens: least } : {}),
  };
}

/** What answered and what it cost: the upstream's figures, or (`estimated`) an estimate from the text. */
export function answeredBy(provider: AiProvider, model: string, usage: TokenUsage | undefined, sentChars: number, receivedChars: number): NonNullable<GateOutcome['answered']> {
  const measured = measuredUsage(usage, sentChars, receivedChars);
  return { provider: provider.name, providerKind: provider.kind, model, usage: measured.usage, estimated: measured.estimated };
}
