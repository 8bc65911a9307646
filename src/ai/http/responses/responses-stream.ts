/**
 * A streamed Response as OpenAI sends it: named server-sent events, each with its `sequence_number`, in
 * OpenAI's order: `response.created`, `response.in_progress`; per output item `response.output_item.added`,
 * its content (`response.content_part.added`, `response.output_text.delta`... `.done`,
 * `response.content_part.done`, or `response.function_call_arguments.delta`... `.done`) and
 * `response.output_item.done`; then `response.completed`, or `response.incomplete` when the model stopped at
 * the token limit. A failure after the first event is `response.failed` carrying the error, never a silent
 * close. Nothing is written before the upstream's first event (src/http/sse-writer.ts), so an error up to then
 * is an ordinary JSON error with its status.
 *
 * Tool calls the upstream streams interleaved stay open side by side and are closed in output order at the end.
 * A search Tollgate runs for the `web_search` tool (responses-web-search.ts) is a `web_search_call` item between
 * the model's turns: `response.output_item.added`, `response.web_search_call.in_progress`, `.searching`, then
 * `.completed` and `response.output_item.done` (a failed search has no `.completed`, its item says `failed`).
 *
 * An upstream that speaks the Responses API itself (docs/decisions.md B19) has its own events written as they
 * arrived (responses-native.ts), decided by the first event; a failure after them is still `response.failed`.
 */
import type { GenerateStreamEvent } from '../../client/ai-client';
import type { ToolCallDelta } from '../../providers/ai-provider.interface';
import { type SseFormat, sseEvent } from '../../../http/sse-writer';
import { toOpenAiError } from '../openai/openai-errors';
import { qualifiedModel } from '../openai/openai-responses';
import { finishedStatus, functionCallOutput, messageOutput, responseBody, type ResponseHeader, responsesUsage, type StoredResponseBody } from './responses-bodies';
import { itemId, type ResponseItem, type WebSearchCallItem } from './responses-input';
import type { CallNames } from './responses-requests';
import { UpstreamResponseEvents } from './responses-native';
import type { ResponsesStreamEvent } from './responses-web-search';

interface OpenMessage {
  outputIndex: number;
  id: string;
  text: string;
}

interface OpenCall {
  outputIndex: number;
  id: string;
  callId: string;
  name: string;
  arguments: string;
}

/** The final Response of a stream and its output items. */
export interface SettledResponse {
  response: StoredResponseBody;
  output: readonly ResponseItem[];
}

/**
 * One stream's events. {@link ResponsesStream.settle} builds the final Response from the upstream's `done`
 * before its events are written, so the caller can store it first: a client that continues the conversation
 * the moment it reads `response.completed` finds it stored.
 */
export class ResponsesStream implements SseFormat<ResponsesStreamEvent> {
  private sequence = 0;
  /** Frames made while settling, written before the final event. */
  private pending = '';
  private settled?: SettledResponse;
  /** Output items by output index; an open item's slot is filled when it closes. */
  private readonly output: ResponseItem[] = [];
  private message?: OpenMessage;
  /** Open calls by the domain's call index. */
  private readonly calls = new Map<number, OpenCall>();
  /** Output indexes of the searches under way, by item id. */
  private readonly searches = new Map<string, number>();

  /** Decided by the first event: the upstream's own events (set), or the domain's translated (null). */
  private upstream?: UpstreamResponseEvents | null;

  /** `names` gives each called function the name and namespace the request's tools declared it with. */
  constructor(
    private readonly header: ResponseHeader,
    private readonly names: CallNames,
  ) {}

  /** Nothing until the first event says whose events these are. */
  opening(): string {
    return '';
  }

  render(event: ResponsesStreamEvent): string {
    if (this.upstream === undefined) {
      this.upstream = event.type !== 'web_search' && event.native ? new UpstreamResponseEvents(this.header) : null;
      if (!this.upstream) return this.domainOpening() + this.render(event);
    }
    if (event.type === 'web_search') return this.webSearch(event.item);
    if (this.upstream) {
      if (event.type === 'done') this.upstream.settle(event);
      return event.native ? this.upstream.render(event.native) : '';
    }
    if (event.type === 'done') return this.finish(event);
    let frames = event.text !== '' ? this.text(event.text) : '';
    for (const delta of event.toolCalls ?? []) frames += this.toolCall(delta);
    return frames;
  }

  isLast(event: ResponsesStreamEvent): boolean {
    return event.type === 'done';
  }

  closing(): string {
    return this.failed({ code: 'server_error', message: 'The upstream stream ended before the answer was complete.' });
  }

  failure(error: unknown) {
    const mapped = toOpenAiError(error);
    return { frame: this.failed({ code: mapped.body.error.code ?? 'server_error', message: mapped.body.error.message }), unexpected: mapped.unexpected };
  }

  private domainOpening(): string {
    const response = responseBody(this.header, { status: 'in_progress', output: [], usage: null });
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private text(delta: string): string {
    const frames = this.message ? '' : this.openMessage();
    const message = this.message!;
    message.text += delta;
    return frames + this.event('response.output_text.delta', { item_id: message.id, output_index: message.outputIndex, content_index: 0, delta, logprobs: [] });
  }

  private openMessage(): string {
    const message: OpenMessage = { outputIndex: this.output.length, id: itemId('msg'), text: '' };
    this.message = message;
    this.output.push(messageOutput(message.id, ''));
    return (
      this.event('response.output_item.added', {
        output_index: message.outputIndex,
        item: { id: message.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      }) + this.event('response.content_part.added', { item_id: message.id, output_index: message.outputIndex, content_index: 0, part: outputText('') })
    );
  }

  private toolCall(delta: ToolCallDelta): string {
    let frames = '';
    let call = this.calls.get(delta.index);
    if (!call) {
      frames += this.closeMessage();
      call = { outputIndex: this.output.length, id: itemId('fc'), callId: delta.id ?? itemId('fc'), name: delta.name ?? '', arguments: '' };
      this.calls.set(delta.index, call);
      const item = functionCallOutput(call.id, { id: call.callId, name: call.name, arguments: '' }, this.names);
      this.output.push(item);
      frames += this.event('response.output_item.added', { output_index: call.outputIndex, item: { ...item, status: 'in_progress' } });
    }
    if (!delta.arguments) return frames;
    call.arguments += delta.arguments;
    return frames + this.event('response.function_call_arguments.delta', { item_id: call.id, output_index: call.outputIndex, delta: delta.arguments });
  }

  /** A search starting (its item added, in progress) or ended (its item done); the model's text before it is closed. */
  private webSearch(item: WebSearchCallItem): string {
    const started = this.searches.get(item.id);
    if (started === undefined) {
      const frames = this.closeMessage();
      const outputIndex = this.output.length;
      this.searches.set(item.id, outputIndex);
      this.output.push(item);
      const at = { item_id: item.id, output_index: outputIndex };
      return (
        frames +
        this.event('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress' } }) +
        this.event('response.web_search_call.in_progress', at) +
        this.event('response.web_search_call.searching', at)
      );
    }
    this.searches.delete(item.id);
    this.output[started] = item;
    const completed = item.status === 'completed' ? this.event('response.web_search_call.completed', { item_id: item.id, output_index: started }) : '';
    return completed + this.event('response.output_item.done', { output_index: started, item });
  }

  private closeMessage(): string {
    const message = this.message;
    if (!message) return '';
    this.message = undefined;
    const item = messageOutput(message.id, message.text);
    this.output[message.outputIndex] = item;
    const at = { item_id: message.id, output_index: message.outputIndex, content_index: 0 };
    return (
      this.event('response.output_text.done', { ...at, text: message.text, logprobs: [] }) +
      this.event('response.content_part.done', { ...at, part: outputText(message.text) }) +
      this.event('response.output_item.done', { output_index: message.outputIndex, item })
    );
  }

  private closeCalls(): string {
    let frames = '';
    for (const call of [...this.calls.values()].sort((a, b) => a.outputIndex - b.outputIndex)) {
      const item = functionCallOutput(call.id, { id: call.callId, name: call.name, arguments: call.arguments }, this.names);
      this.output[call.outputIndex] = item;
      const { name } = this.names(call.name);
      frames +=
        this.event('response.function_call_arguments.done', { item_id: call.id, output_index: call.outputIndex, name, arguments: call.arguments }) +
        this.event('response.output_item.done', { output_index: call.outputIndex, item });
    }
    this.calls.clear();
    return frames;
  }

  /** Closes every open item and builds the final Response (once; later calls answer the same). */
  settle(done: Extract<GenerateStreamEvent, { type: 'done' }>): SettledResponse {
    if (this.settled) return this.settled;
    if (done.native) {
      const response = (this.upstream ??= new UpstreamResponseEvents(this.header)).settle(done);
      this.settled = { response, output: response.output };
      return this.settled;
    }
    // An answer without text or calls is one empty message, as the non-streamed answer is.
    if (this.output.length === 0) this.pending += this.openMessage();
    this.pending += this.closeMessage() + this.closeCalls();
    const header = { ...this.header, model: qualifiedModel(done.provider, done.model) };
    const response = responseBody(header, { ...finishedStatus(done.finishReason), output: this.output, usage: responsesUsage(done.usage) });
    this.settled = { response, output: this.output };
    return this.settled;
  }

  private finish(done: Extract<GenerateStreamEvent, { type: 'done' }>): string {
    const { response } = this.settle(done);
    const frames = this.pending;
    this.pending = '';
    return frames + this.event(response.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  private failed(error: { code: string; message: string }): string {
    if (this.upstream) return this.upstream.failed(error);
    const response = responseBody(this.header, { status: 'failed', output: this.output, usage: null, error });
    return this.event('response.failed', { response });
  }

  private event(type: string, payload: object): string {
    return sseEvent(type, { type, sequence_number: this.sequence++, ...payload });
  }
}

function outputText(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}
