/**
 * ConverseStream: the `application/vnd.amazon.eventstream` body split into messages (each prefixed by its total
 * length; headers and CRCs checked by Smithy's EventStreamCodec), then events translated to stream chunks.
 * Events: messageStart, contentBlockStart (a toolUse's id and name), contentBlockDelta (`text`, or `toolUse.input`
 * pieces of JSON text), contentBlockStop, messageStop (stopReason), metadata (usage). An `exception` message after
 * the 200 (throttlingException, modelStreamErrorException, ...) is mapped like a status answer.
 */
import type { EventStreamCodec, Message } from '@smithy/core/event-streams';
import { isObject } from '../../../common/json-values';
import { InvalidResponseError, type TollgateError } from '../../errors';
import type { GenerateStreamChunk, TokenUsage } from '../ai-provider.interface';
import { mapBedrockStopReason, toBedrockUsage } from './bedrock-converse';

/** A message larger than this is refused rather than buffered (Bedrock's chunks are a few kilobytes). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

let sharedCodec: EventStreamCodec | undefined;

/** Made at the first Bedrock stream: a configuration without Bedrock loads none of Smithy (decision C13). */
function eventStreamCodec(): EventStreamCodec {
  if (!sharedCodec) {
    const { EventStreamCodec: Codec } = require('@smithy/core/event-streams') as typeof import('@smithy/core/event-streams');
    sharedCodec = new Codec(
      (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
      (text) => Buffer.from(text, 'utf8'),
    );
  }
  return sharedCodec;
}

/** Whole event-stream messages from a byte stream; a message split across chunks is joined first. */
export async function* readEventStream(body: AsyncIterable<Buffer>, provider: string): AsyncGenerator<Message> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of body) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0);
      if (length < 16 || length > MAX_MESSAGE_BYTES) throw malformed(provider);
      if (pending.length < length) break;
      let message: Message;
      try {
        message = eventStreamCodec().decode(pending.subarray(0, length));
      } catch {
        throw malformed(provider);
      }
      pending = pending.subarray(length);
      yield message;
    }
  }
  if (pending.length > 0) throw malformed(provider);
}

function malformed(provider: string): InvalidResponseError {
  return new InvalidResponseError(`${provider}: upstream sent a malformed event-stream message`, { provider });
}

export function headerText(message: Message, name: string): string | undefined {
  const header = message.headers[name];
  return header?.type === 'string' ? header.value : undefined;
}

export class BedrockStreamTranslator {
  private stopReason: unknown;
  private usage?: TokenUsage;
  /** contentBlockIndex -> tool call index, for toolUse blocks. */
  private readonly toolIndexOf = new Map<number, number>();
  private finished = false;

  constructor(
    private readonly provider: string,
    private readonly model: string,
    private readonly mapException: (type: string, body: unknown) => TollgateError,
  ) {}

  /** The chunk one message yields, if any. */
  message(message: Message): GenerateStreamChunk | undefined {
    const kind = headerText(message, ':message-type');
    const body = this.json(message.body);
    if (kind === 'exception' || kind === 'error') {
      throw this.mapException(headerText(message, ':exception-type') ?? headerText(message, ':error-code') ?? 'internalServerException', body);
    }
    const event = headerText(message, ':event-type');
    switch (event) {
      case 'contentBlockStart': {
        const toolUse = isObject(body.start) && isObject(body.start.toolUse) ? body.start.toolUse : undefined;
        if (!toolUse) return undefined;
        if (typeof body.contentBlockIndex !== 'number' || typeof toolUse.toolUseId !== 'string' || typeof toolUse.name !== 'string') {
          throw new InvalidResponseError(`${this.provider}: upstream toolUse block start lacks its index, id or name`, { provider: this.provider });
        }
        const index = this.toolIndexOf.size;
        this.toolIndexOf.set(body.contentBlockIndex, index);
        return { done: false, text: '', toolCalls: [{ index, id: toolUse.toolUseId, name: toolUse.name, arguments: '' }] };
      }
      case 'contentBlockDelta': {
        const delta = isObject(body.delta) ? body.delta : {};
        if (typeof delta.text === 'string') return delta.text === '' ? undefined : { done: false, text: delta.text };
        if (isObject(delta.toolUse) && typeof delta.toolUse.input === 'string') {
          const index = typeof body.contentBlockIndex === 'number' ? this.toolIndexOf.get(body.contentBlockIndex) : undefined;
          if (index === undefined) throw new InvalidResponseError(`${this.provider}: upstream toolUse delta for a block that is not a toolUse`, { provider: this.provider });
          return { done: false, text: '', toolCalls: [{ index, arguments: delta.toolUse.input }] };
        }
        return undefined;
      }
      case 'messageStop':
        this.stopReason = body.stopReason;
        this.finished = true;
        return undefined;
      case 'metadata':
        this.usage = toBedrockUsage(body.usage) ?? this.usage;
        return undefined;
      default:
        return undefined; // messageStart, contentBlockStop and future events carry nothing to translate.
    }
  }

  finish(): GenerateStreamChunk {
    if (!this.finished) throw new InvalidResponseError(`${this.provider}: upstream stream ended before messageStop`, { provider: this.provider });
    return { done: true, model: this.model, finishReason: mapBedrockStopReason(this.stopReason), usage: this.usage };
  }

  private json(bytes: Uint8Array): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
      if (isObject(parsed)) return parsed;
    } catch {
      // Falls through to the typed error below.
    }
    throw new InvalidResponseError(`${this.provider}: upstream sent a malformed stream event`, { provider: this.provider });
  }
}
