/**
 * AWS Bedrock runtime emulator: Converse (`POST /model/<id>/converse`), ConverseStream (`/converse-stream`, answered
 * in `application/vnd.amazon.eventstream` messages encoded by Smithy's codec) and InvokeModel for Titan and Cohere
 * embeddings (`/invoke`). Requests must carry a SigV4 signature (service `bedrock`, the emulator's region) that the
 * emulator recomputes with the secret of the access key id it names, over the request as received; a mismatch is
 * 403 `InvalidSignatureException`, an unknown key id 403 `UnrecognizedClientException`, as AWS answers. A Bedrock API
 * key may come as `Authorization: Bearer` instead. Errors are `{"message"}` with the name in `x-amzn-errortype`.
 * Scripted answers: with `toolConfig` and a user turn that holds no toolResult, a toolUse of the first tool (input made
 * from its schema); otherwise text naming the images and documents read. Validated as Converse does: `cachePoint`
 * blocks (`type: default`, `ttl` 5m or 1h, at most 4, never first, ttls not increasing from tools to system to
 * messages), `document` blocks (a known format, a name of letters, digits, single spaces, hyphens, parentheses and
 * brackets, bytes, and a text block beside them). Prompt caching: each cachePoint caches the prefix before it (tools,
 * system, messages; one character per token), so a later request with that prefix reads it and a new one writes
 * it; configured cache reads and writes replace that reckoning.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { SignatureV4 } from '@smithy/signature-v4';
import type { EmulatorReply, EmulatorRequest, EmulatorServer } from './emulator-server';
import { startEmulator } from './emulator-server';

export const BEDROCK_BODY_MARKER = 'bedrock-upstream-body-93d0';
export const BEDROCK_REGION = 'eu-central-1';
export const BEDROCK_ACCESS_KEY_ID = 'AKIAEMULATOR0000001';
export const BEDROCK_SECRET_KEY = 'emulator-secret-MARKER-58fa';
export const BEDROCK_API_KEY = 'bedrock-api-key-MARKER-1c07';
export const BEDROCK_REPLY = 'Hello from the Bedrock emulator';

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);

export interface BedrockEmulatorOptions {
  chatModels: string[];
  dimensions: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Streamed answers send their first events, then this exception message. */
  streamException?: string;
}

export class BedrockEmulator {
  readonly options: BedrockEmulatorOptions;
  /** The prompt prefixes cached so far (cachePoint keys); a test clears it to start cold. */
  readonly cached = new Set<string>();

  private constructor(readonly server: EmulatorServer, options: Partial<BedrockEmulatorOptions>) {
    this.options = { chatModels: options.chatModels ?? ['anthropic.claude-sonnet-4-5-20250929-v1:0', 'amazon.nova-lite-v1:0'], dimensions: options.dimensions ?? 4 };
  }

  static async start(options: Partial<BedrockEmulatorOptions> = {}): Promise<BedrockEmulator> {
    const emulator = new BedrockEmulator(await startEmulator(), options);
    const route = /^\/model\/(?<model>[^/]+)\/(?<operation>converse|converse-stream|invoke)$/;
    emulator.server.route('POST', route, async (req) => (await emulator.authFailure(req)) ?? emulator.operation(req));
    return emulator;
  }

  get url(): string {
    return this.server.url;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async authFailure(req: EmulatorRequest): Promise<EmulatorReply | undefined> {
    const header = String(req.headers.authorization ?? '');
    if (header.startsWith('Bearer ')) return header === `Bearer ${BEDROCK_API_KEY}` ? undefined : awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    const found = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/bedrock\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(header);
    if (!found) return awsError(403, 'IncompleteSignatureException', 'Authorization header requires Credential, SignedHeaders and Signature.');
    const [, keyId, , region, signedHeaders, signature] = found;
    if (keyId !== BEDROCK_ACCESS_KEY_ID) return awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
    if (!date || region !== BEDROCK_REGION) return awsError(403, 'InvalidSignatureException', 'Credential should be scoped to a valid region.');
    const headers: Record<string, string> = {};
    for (const name of signedHeaders.split(';')) headers[name] = String(req.headers[name] ?? '');
    const signer = new SignatureV4({ service: 'bedrock', region, sha256: Sha256, credentials: { accessKeyId: keyId, secretAccessKey: BEDROCK_SECRET_KEY } });
    const signingDate = new Date(Date.UTC(+date[1], +date[2] - 1, +date[3], +date[4], +date[5], +date[6]));
    const expected = await signer.sign(
      { method: req.method, protocol: 'http:', hostname: '127.0.0.1', path: req.path, query: Object.fromEntries(req.query), headers, body: req.rawBody },
      { signingDate },
    );
    const computed = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1];
    if (computed !== signature) {
      return awsError(403, 'InvalidSignatureException', 'The request signature we calculated does not match the signature you provided.');
    }
    return undefined;
  }

  private operation(req: EmulatorRequest): EmulatorReply {
    const model = decodeURIComponent(req.params.model);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (req.params.operation === 'invoke') return this.invoke(model, body);
    if (!this.options.chatModels.includes(model)) return awsError(404, 'ResourceNotFoundException', 'Could not resolve the foundation model from the provided model identifier.');
    const invalid = validateConverse(body);
    if (invalid) return awsError(400, 'ValidationException', invalid);
    const content = answer(body);
    const stopReason = content.some((b) => 'toolUse' in b) ? 'tool_use' : 'end_turn';
    const usage = this.usage(body);
    if (req.params.operation === 'converse') {
      return { body: { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 12 } } };
    }
    const events: Array<[string, object]> = [['messageStart', { role: 'assistant' }]];
    content.forEach((block, index) => {
      if ('toolUse' in block) {
        const { toolUseId, name, input } = block.toolUse as { toolUseId: string; name: string; input: unknown };
        const text = JSON.stringify(input);
        events.push(['contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId, name } } }]);
        events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: text.slice(0, 5) } } }]);
        events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: text.slice(5) } } }]);
      } else {
        for (const word of String(block.text).split(/(?<= )/)) events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { text: word } }]);
      }
      events.push(['contentBlockStop', { contentBlockIndex: index }]);
    });
    events.push(['messageStop', { stopReason }], ['metadata', { usage, metrics: { latencyMs: 12 } }]);
    const frames = events.map(([type, payload]) => eventMessage(type, payload));
    if (this.options.streamException) {
      frames.splice(2, frames.length, exceptionMessage(this.options.streamException, `stream failed ${BEDROCK_BODY_MARKER}`));
    }
    return { headers: { 'content-type': 'application/vnd.amazon.eventstream' }, chunks: frames };
  }

  /** Converse's usage: the configured cache figures, else the prefix cache of the request's cachePoints. */
  private usage(body: Record<string, unknown>): Record<string, number> {
    const prompt = JSON.stringify(body.messages).length;
    const { cacheReadTokens, cacheWriteTokens } = this.options;
    if (cacheReadTokens !== undefined || cacheWriteTokens !== undefined) {
      return {
        inputTokens: prompt,
        outputTokens: 6,
        totalTokens: prompt + 6 + (cacheReadTokens ?? 0) + (cacheWriteTokens ?? 0),
        ...(cacheReadTokens !== undefined ? { cacheReadInputTokens: cacheReadTokens } : {}),
        ...(cacheWriteTokens !== undefined ? { cacheWriteInputTokens: cacheWriteTokens } : {}),
      };
    }
    const { total, read, written } = prefixCache(body, this.cached);
    return {
      inputTokens: total - read - written,
      outputTokens: 6,
      totalTokens: total + 6,
      ...(read + written > 0 ? { cacheReadInputTokens: read, cacheWriteInputTokens: written } : {}),
    };
  }

  private invoke(model: string, body: Record<string, unknown>): EmulatorReply {
    if (model.startsWith('amazon.titan-embed')) {
      if (typeof body.inputText !== 'string') return awsError(400, 'ValidationException', 'Malformed input request: required key [inputText] not found');
      const dimensions = typeof body.dimensions === 'number' ? body.dimensions : this.options.dimensions;
      return { body: { embedding: bedrockVector(body.inputText, dimensions), inputTextTokenCount: body.inputText.split(' ').length } };
    }
    if (model.startsWith('cohere.embed')) {
      if (!Array.isArray(body.texts)) return awsError(400, 'ValidationException', 'texts is required');
      return { body: { embeddings: body.texts.map((t: string) => bedrockVector(t, this.options.dimensions)), id: 'emb-1', response_type: 'embeddings_floats', texts: body.texts } };
    }
    return awsError(404, 'ResourceNotFoundException', 'Could not resolve the foundation model from the provided model identifier.');
  }
}

export function bedrockVector(text: string, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, i) => ((text.length * 11 + i * 5) % 97) / 97);
}

function awsError(status: number, name: string, message: string): EmulatorReply {
  return { status, headers: { 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/` }, body: { message: `${message} ${BEDROCK_BODY_MARKER}` } };
}

function eventMessage(type: string, payload: object): Buffer {
  return Buffer.from(
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      },
      // Bedrock pads each event with a `p` field of random length against traffic analysis.
      body: Buffer.from(JSON.stringify({ ...payload, p: 'abcdefgh' })),
    }),
  );
}

function exceptionMessage(type: string, message: string): Buffer {
  return Buffer.from(
    codec.encode({
      headers: {
        ':exception-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'exception' },
      },
      body: Buffer.from(JSON.stringify({ message })),
    }),
  );
}

type Block = Record<string, unknown>;

const DOCUMENT_FORMATS = ['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md'];
const DOCUMENT_NAME = /^[A-Za-z0-9()[\]-]+(?: [A-Za-z0-9()[\]-]+)*$/;

function validateConverse(body: Record<string, unknown>): string | undefined {
  const messages = body.messages as Array<{ role?: string; content?: Block[] }> | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  if (messages[0].role !== 'user') return 'A conversation must start with a user message.';
  const tools = ((body.toolConfig as { tools?: Block[] } | undefined)?.tools) ?? [];
  for (const [t, tool] of tools.entries()) {
    const keys = Object.keys(tool);
    if (keys.length !== 1 || !['toolSpec', 'cachePoint'].includes(keys[0])) return `toolConfig.tools.${t}: a tool is a toolSpec or a cachePoint`;
  }
  const system = (body.system as Block[] | undefined) ?? [];
  for (const [b, block] of system.entries()) {
    const keys = Object.keys(block);
    if (keys.length !== 1 || !['text', 'cachePoint', 'guardContent'].includes(keys[0])) return `system.${b}: unknown system content block`;
  }
  for (let i = 0; i < messages.length; i++) {
    if (i > 0 && messages[i].role === messages[i - 1].role) return 'A conversation must alternate between user and assistant roles.';
    if (!Array.isArray(messages[i].content) || messages[i].content!.length === 0) return `messages.${i}.content: at least one block is required`;
    for (const block of messages[i].content!) {
      const keys = Object.keys(block);
      if (keys.length !== 1 || !['text', 'image', 'document', 'toolUse', 'toolResult', 'cachePoint'].includes(keys[0])) return `messages.${i}: unknown content block`;
      if (('toolUse' in block || 'toolResult' in block) && body.toolConfig === undefined) return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
      const image = block.image as { format?: string; source?: { bytes?: unknown } } | undefined;
      if (image && (!['png', 'jpeg', 'gif', 'webp'].includes(String(image.format)) || typeof image.source?.bytes !== 'string')) return `messages.${i}: invalid image block`;
      const document = block.document as { format?: string; name?: unknown; source?: { bytes?: unknown } } | undefined;
      if (document) {
        if (!DOCUMENT_FORMATS.includes(String(document.format))) return `messages.${i}: document format must be one of ${DOCUMENT_FORMATS.join(', ')}`;
        if (typeof document.name !== 'string' || !DOCUMENT_NAME.test(document.name)) return `messages.${i}: document name may only contain alphanumeric characters, single whitespace, hyphens, parentheses and square brackets`;
        if (typeof document.source?.bytes !== 'string') return `messages.${i}: document source bytes are required`;
        if (!messages[i].content!.some((other) => 'text' in other)) return `messages.${i}: a message with a document must also contain a text block`;
      }
    }
  }
  return validateCachePoints([tools, system, ...messages.map((m) => m.content!)]);
}

/** Cache points as Converse takes them: `{type: default, ttl?: 5m|1h}`, after content, at most 4, ttls not increasing. */
function validateCachePoints(sections: Block[][]): string | undefined {
  let count = 0;
  let previousTtl = '1h';
  for (const blocks of sections) {
    for (const [index, block] of blocks.entries()) {
      if (!('cachePoint' in block)) continue;
      const point = block.cachePoint as Record<string, unknown>;
      const extra = Object.keys(point).filter((key) => key !== 'type' && key !== 'ttl');
      if (point.type !== 'default' || extra.length > 0) return 'cachePoint: type must be default';
      if (point.ttl !== undefined && point.ttl !== '5m' && point.ttl !== '1h') return 'cachePoint.ttl must be one of 5m, 1h';
      if (index === 0) return 'A cachePoint must follow content it caches.';
      const ttl = (point.ttl as string | undefined) ?? '5m';
      if (ttl === '1h' && previousTtl === '5m') return 'A cachePoint with a longer ttl cannot follow one with a shorter ttl.';
      previousTtl = ttl;
      count += 1;
    }
  }
  return count > 4 ? 'A maximum of 4 cachePoint blocks may be provided.' : undefined;
}

/**
 * The prompt read in order (tool specs, system, messages; one character per token): the longest prefix ending at a
 * cachePoint seen before is read, the rest up to the last cachePoint written (and remembered).
 */
function prefixCache(body: Record<string, unknown>, cached: Set<string>): { total: number; read: number; written: number } {
  const blocks: Block[] = [
    ...(((body.toolConfig as { tools?: Block[] } | undefined)?.tools) ?? []),
    ...((body.system as Block[] | undefined) ?? []),
    ...((body.messages as Array<{ role: string; content: Block[] }>).flatMap((m) => m.content.map((b) => ({ ...b, role: m.role })))),
  ];
  let prefix = '';
  const points: string[] = [];
  for (const block of blocks) {
    if ('cachePoint' in block) points.push(prefix);
    else prefix += JSON.stringify(block);
  }
  const read = points.filter((point) => cached.has(point)).at(-1)?.length ?? 0;
  const last = points.at(-1)?.length ?? 0;
  for (const point of points) cached.add(point);
  return { total: prefix.length, read, written: Math.max(last - read, 0) };
}

function answer(body: Record<string, unknown>): Block[] {
  const messages = body.messages as Array<{ role: string; content: Block[] }>;
  const last = messages.at(-1)!;
  const tools = ((body.toolConfig as { tools?: Array<{ toolSpec: { name: string; inputSchema: { json: { properties?: Record<string, unknown> } } } }> } | undefined)?.tools) ?? [];
  const toolResults = last.content.filter((b) => 'toolResult' in b);
  if (tools.length > 0 && toolResults.length === 0) {
    const [tool] = tools;
    const input = Object.fromEntries(Object.keys(tool.toolSpec.inputSchema.json.properties ?? {}).map((key) => [key, `${key}-1`]));
    return [{ text: 'Let me check.' }, { toolUse: { toolUseId: 'tooluse_emulated_1', name: tool.toolSpec.name, input } }];
  }
  if (toolResults.length > 0) {
    const texts = toolResults.map((b) => ((b.toolResult as { content: Array<{ text: string }> }).content[0]?.text ?? ''));
    return [{ text: `Tool said: ${texts.join(' | ')}` }];
  }
  const images = last.content.filter((b) => 'image' in b).length;
  const documents = last.content.filter((b) => 'document' in b).map((b) => (b.document as { name: string }).name);
  const read = [...(images > 0 ? [`${images} image`] : []), ...documents.map((name) => `document ${name}`)];
  return [{ text: read.length > 0 ? `${BEDROCK_REPLY} (${read.join(', ')})` : BEDROCK_REPLY }];
}
