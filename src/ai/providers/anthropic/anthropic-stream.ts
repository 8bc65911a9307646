/**
 * Messages API stream events -> stream chunks. Text deltas pass through; each `tool_use` content block is one
 * tool call, numbered in the order its block starts (the n-th tool_use block is index n, whatever its content
 * block index), its `input_json_delta` pieces are the call's arguments text. With a JSON-output tool, that
 * tool's pieces are the answer's text instead.
 */
import { isObject } from '../../../common/json-values';
import { InvalidResponseError } from '../../errors';
import type { GenerateStreamChunk } from '../ai-provider.interface';
import { anthropicErrorType, mapAnthropicError } from './anthropic-errors';
import { mapAnthropicStopReason } from './anthropic-stop-reason';
import { toTokenUsage } from './anthropic-usage';

export class AnthropicStreamTranslator {
  private answeredModel: string;
  private stopReason: unknown;
  private usage: Record<string, unknown> = {};
  /**
   * Content block index -> tool call index, for tool_use blocks (the JSON tool maps to -1: it is text; a server
   * tool's call, which Anthropic runs itself, to -2: no call of the caller's).
   */
  private readonly toolIndexOf = new Map<number, number>();
  private toolCount = 0;
  /** Whether the JSON-output tool streamed any input; an input of `{}` may arrive as a single empty piece. */
  private jsonTextSent = false;

  constructor(
    private readonly provider: string,
    requestedModel: string,
    private readonly jsonTool?: string,
  ) {
    this.answeredModel = requestedModel;
  }

  /** The chunks one event yields: none, one delta, or the final chunk (then `finished` is true). */
  translate(data: Record<string, unknown>): GenerateStreamChunk[] {
    switch (data.type) {
      case 'message_start':
        if (isObject(data.message)) {
          if (typeof data.message.model === 'string') this.answeredModel = data.message.model;
          if (isObject(data.message.usage)) this.usage = { ...this.usage, ...data.message.usage };
        }
        return [];
      case 'content_block_start':
        return this.blockStart(data);
      case 'content_block_delta':
        return this.blockDelta(data);
      case 'content_block_stop':
        // The answer must still be a JSON object when the forced tool streamed no input text.
        if (typeof data.index === 'number' && this.toolIndexOf.get(data.index) === -1 && !this.jsonTextSent) {
          this.jsonTextSent = true;
          return [{ done: false, text: '{}' }];
        }
        return [];
      case 'message_delta':
        if (isObject(data.delta) && typeof data.delta.stop_reason === 'string') this.stopReason = data.delta.stop_reason;
        // Counts in message_delta are cumulative, so they replace those of message_start.
        if (isObject(data.usage)) this.usage = { ...this.usage, ...withoutNulls(data.usage) };
        return [];
      case 'message_stop': {
        const usage = toTokenUsage(this.usage);
        return [
          {
            done: true,
            model: this.answeredModel,
            finishReason: mapAnthropicStopReason(this.stopReason, this.jsonTool !== undefined),
            ...(usage ? { usage } : {}),
          },
        ];
      }
      case 'error':
        // A failure after the 200 arrives as an event; it carries the same error shape as a status answer.
        throw mapAnthropicError({
          provider: this.provider,
          status: anthropicErrorType(data) === 'overloaded_error' ? 529 : 500,
          headers: {},
          body: data,
          model: this.answeredModel,
        });
      default:
        return []; // ping and future event types carry nothing to translate.
    }
  }

  private blockStart(data: Record<string, unknown>): GenerateStreamChunk[] {
    const block = data.content_block;
    if (isObject(block) && SERVER_TOOL_CALL.has(block.type) && typeof data.index === 'number') {
      this.toolIndexOf.set(data.index, SERVER_TOOL_INDEX);
      return [];
    }
    if (!isObject(block) || block.type !== 'tool_use') return [];
    if (typeof data.index !== 'number' || typeof block.id !== 'string' || typeof block.name !== 'string') {
      throw new InvalidResponseError(`${this.provider}: upstream tool_use block start lacks index, id or name`, { provider: this.provider });
    }
    if (this.jsonTool !== undefined && block.name === this.jsonTool) {
      this.toolIndexOf.set(data.index, -1);
      return [];
    }
    const index = this.toolCount++;
    this.toolIndexOf.set(data.index, index);
    return [{ done: false, text: '', toolCalls: [{ index, id: block.id, name: block.name, arguments: '' }] }];
  }

  private blockDelta(data: Record<string, unknown>): GenerateStreamChunk[] {
    const delta = data.delta;
    if (!isObject(delta)) return [];
    if (delta.type === 'text_delta' && typeof delta.text === 'string') return [{ done: false, text: delta.text }];
    if (delta.type !== 'input_json_delta' || typeof delta.partial_json !== 'string') return [];
    const index = typeof data.index === 'number' ? this.toolIndexOf.get(data.index) : undefined;
    if (index === undefined) {
      throw new InvalidResponseError(`${this.provider}: upstream input_json_delta for a block that is not a tool_use`, { provider: this.provider });
    }
    if (delta.partial_json === '' || index === SERVER_TOOL_INDEX) return [];
    if (index === -1) {
      this.jsonTextSent = true;
      return [{ done: false, text: delta.partial_json }];
    }
    return [{ done: false, text: '', toolCalls: [{ index, arguments: delta.partial_json }] }];
  }
}

/** Blocks of a call a server tool makes (web search, code execution, an MCP server's tool), answered by Anthropic. */
const SERVER_TOOL_CALL: ReadonlySet<unknown> = new Set(['server_tool_use', 'mcp_tool_use']);
const SERVER_TOOL_INDEX = -2;

function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined));
}
