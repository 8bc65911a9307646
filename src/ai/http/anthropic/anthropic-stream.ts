/**
 * Streamed Messages as Anthropic sends them: `message_start` (the message with empty content and usage), a
 * `ping`, then per content block `content_block_start`, its `content_block_delta`s (`text_delta`,
 * `input_json_delta`) and `content_block_stop`, then `message_delta` (stop reason and the final usage) and
 * `message_stop`. Written by the shared SSE writer (src/http/sse-writer.ts): nothing before the first
 * generation event, so a failure up to then (unknown model, refusal, every fallback failing) is an ordinary
 * Anthropic error with its status; a failure after it is one `event: error` frame, which Anthropic's clients
 * raise as an API error, never a silent close.
 *
 * The domain's stream carries text and tool-call pieces, and some providers interleave the pieces of several
 * calls, which Anthropic's blocks (one open at a time) cannot: the first call streams live in its `tool_use`
 * block, every later call of the same answer is held and sent whole (one `input_json_delta`) once the live one
 * has ended (at the next text or the end of the answer). A piece for a call already sent cannot occur with the
 * adapters of this gateway (a call's pieces never follow text); it would be held and sent as a call of its own.
 *
 * An Anthropic upstream's own events (the request went in its dialect, docs/decisions.md B16) are written as
 * they arrived, event for event and byte for byte (thinking and signature deltas, cache usage, `ping`s), except
 * that `message_start` names the model as the caller asked, like every answer of this surface.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GenerateStreamEvent } from '../../client/ai-client';
import type { NativeEvent, ToolCallDelta } from '../../providers/ai-provider.interface';
import { type SseFormat, sseEvent, writeSse } from '../../../http/sse-writer';
import { toAnthropicError } from './anthropic-errors';
import { anthropicStopReason, anthropicUsage, messageId } from './anthropic-responses';

/** `model` names the stream as the caller asked; `inputTokens` is the estimate `message_start` reports. */
export function writeMessageStream(
  request: FastifyRequest,
  reply: FastifyReply,
  events: AsyncIterable<GenerateStreamEvent>,
  model: string,
  inputTokens: number,
): Promise<void> {
  return writeSse(request, reply, events, messageStreamFormat(model, inputTokens));
}

/**
 * Anthropic's spelling of one generation stream. Stateful (the open block, the live and the waiting tool calls), so
 * one per stream. `message_start` reports the estimated input tokens, as the API reports its own
 * count there before generating; `message_delta` carries the provider's final counts.
 */
export function messageStreamFormat(model: string, inputTokens: number): SseFormat<GenerateStreamEvent> {
  let open: { index: number; kind: 'text' | 'tool_use' } | undefined;
  let blocks = 0;

  const startBlock = (kind: 'text' | 'tool_use', contentBlock: object): string => {
    const index = blocks++;
    const frames = closeBlock() + sseEvent('content_block_start', { type: 'content_block_start', index, content_block: contentBlock });
    open = { index, kind };
    return frames;
  };
  const closeBlock = (): string => {
    if (open === undefined) return '';
    const frame = sseEvent('content_block_stop', { type: 'content_block_stop', index: open.index });
    open = undefined;
    return frame;
  };
  const text = (piece: string): string => {
    if (piece === '') return '';
    const start = open?.kind === 'text' ? '' : flushCalls() + startBlock('text', { type: 'text', text: '' });
    return start + sseEvent('content_block_delta', { type: 'content_block_delta', index: open!.index, delta: { type: 'text_delta', text: piece } });
  };
  /** The tool call streamed live; every other call of the answer waits in `waiting` until it ends. */
  let liveCall: number | undefined;
  const closedCalls = new Set<number>();
  const waiting = new Map<number, { id?: string; name?: string; arguments: string }>();
  const toolPiece = (delta: ToolCallDelta): string => {
    if (liveCall === undefined && !waiting.has(delta.index) && !closedCalls.has(delta.index)) {
      liveCall = delta.index;
      return startBlock('tool_use', toolUseStart(delta.id, delta.name)) + argumentsDelta(open!.index, delta.arguments);
    }
    if (delta.index === liveCall && open?.kind === 'tool_use') return argumentsDelta(open.index, delta.arguments);
    const held = waiting.get(delta.index) ?? { arguments: '' };
    held.id ??= delta.id;
    held.name ??= delta.name;
    held.arguments += delta.arguments ?? '';
    waiting.set(delta.index, held);
    return '';
  };
  /** Ends the live call's block and sends each waiting call whole, in the order the calls began. */
  const flushCalls = (): string => {
    let frames = closeBlock();
    if (liveCall !== undefined) closedCalls.add(liveCall);
    liveCall = undefined;
    for (const [index, call] of waiting) {
      frames += startBlock('tool_use', toolUseStart(call.id, call.name)) + argumentsDelta(open!.index, call.arguments) + closeBlock();
      closedCalls.add(index);
    }
    waiting.clear();
    return frames;
  };

  const opening = (): string =>
      sseEvent('message_start', {
        type: 'message_start',
        message: {
          id: messageId(),
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: anthropicUsage({ inputTokens, outputTokens: 0 }),
        },
      }) + sseEvent('ping', { type: 'ping' });
  const translated = (event: GenerateStreamEvent): string => {
    if (event.type === 'done') {
      return (
        flushCalls() +
        sseEvent('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: anthropicStopReason(event.finishReason), stop_sequence: null },
          usage: anthropicUsage(event.usage),
        }) +
        sseEvent('message_stop', { type: 'message_stop' })
      );
    }
    let frames = text(event.text);
    for (const delta of event.toolCalls ?? []) frames += toolPiece(delta);
    return frames;
  };
  /** Decided by the first event: the upstream's own events, or the domain's translated. */
  let native: boolean | undefined;

  return {
    opening: () => '',
    render(event) {
      if (native === undefined) {
        native = event.native !== undefined;
        if (!native) return opening() + translated(event);
      }
      if (native) return event.native ? nativeFrames(event.native, model) : '';
      return translated(event);
    },
    isLast: (event) => event.type === 'done',
    closing: () => (native ? '' : (native === undefined ? opening() : '') + flushCalls() + sseEvent('message_stop', { type: 'message_stop' })),
    failure(error) {
      const mapped = toAnthropicError(error);
      return { frame: sseEvent('error', mapped.body), unexpected: mapped.unexpected };
    },
  };
}

function nativeFrames(events: readonly NativeEvent[], model: string): string {
  let frames = '';
  for (const { event, data } of events) frames += `event: ${event}\ndata: ${event === 'message_start' ? withModel(data, model) : data}\n\n`;
  return frames;
}

/**
 * message_start's data with the message's `model` replaced, the rest of the text as it came. Outside strings a
 * `"model":` is a key (quotes inside strings are escaped), and the message's is the only one before `content`,
 * which is empty at the start; anything else is parsed and written anew.
 */
function withModel(data: string, model: string): string {
  const key = data.indexOf(MODEL_KEY);
  const end = key === -1 ? -1 : stringEnd(data, key + MODEL_KEY.length);
  if (end !== -1 && data.indexOf('"message":') !== -1 && data.indexOf('"message":') < key) {
    return `${data.slice(0, key + MODEL_KEY.length - 1)}${JSON.stringify(model)}${data.slice(end + 1)}`;
  }
  const start = JSON.parse(data) as { message?: { model?: string } };
  if (start.message) start.message.model = model;
  return JSON.stringify(start);
}

const MODEL_KEY = '"model":"';

/** The index of the quote that closes the JSON string whose text starts at `from`, or -1. */
function stringEnd(text: string, from: number): number {
  for (let at = from; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === 0x22) return at;
    if (char === 0x5c) at++;
  }
  return -1;
}

function toolUseStart(id: string | undefined, name: string | undefined): object {
  return { type: 'tool_use', id: id ?? `toolu_${messageId().slice(4)}`, name: name ?? '', input: {} };
}

function argumentsDelta(index: number, partialJson: string | undefined): string {
  if (!partialJson) return '';
  return sseEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partialJson } });
}
