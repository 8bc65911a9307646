/**
 * Tollgate's request as a Converse body, and Converse answers as Tollgate's results: `system` blocks, user and
 * assistant `messages` of content blocks (`text`, `image` and `document` with their bytes, `toolUse`, `toolResult`
 * in the user turn that follows), `inferenceConfig`, `toolConfig` (`toolSpec.inputSchema.json`, `toolChoice`
 * auto/any/tool). A cache hint becomes a `cachePoint` block after its system block, message or tool spec.
 */
import { isObject, numberOrUndefined } from '../../../common/json-values';
import { CapabilityNotSupportedError, InvalidRequestError, InvalidResponseError } from '../../errors';
import type { CacheHint, ChatMessage, DocumentSource, FinishReason, GenerateRequest, GenerateResult, TokenUsage, ToolCall } from '../ai-provider.interface';
import type { ImageInliner } from '../image-downloads';
import { toolArgumentsObject } from '../provider-support';

type Block = Record<string, unknown>;
interface ConverseMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
/** Converse's document formats by media type. */
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

function cachePoint(hint: CacheHint): Block {
  return { cachePoint: { type: 'default', ...(hint.ttl !== undefined ? { ttl: hint.ttl } : {}) } };
}

export async function toConverseBody(request: GenerateRequest, provider: string, images: ImageInliner): Promise<Record<string, unknown>> {
  if (request.responseFormat !== undefined && request.responseFormat.type !== 'text') {
    throw new CapabilityNotSupportedError(`${provider}: bedrock does not support response_format`, { provider });
  }
  refuseUnsupported(request, provider);
  const inlined = await images.inline(request.messages, request.signal);
  const system: Block[] = [];
  const messages: ConverseMessage[] = [];
  const push = (role: ConverseMessage['role'], blocks: Block[]) => {
    const last = messages.at(-1);
    // Converse wants turns to alternate: tool results join the user turn, consecutive turns of a role merge.
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  inlined.forEach((message, index) => {
    const cached = message.cache ? [cachePoint(message.cache)] : [];
    if (message.role === 'system') system.push({ text: message.content }, ...cached);
    else push(message.role === 'assistant' ? 'assistant' : 'user', [...blocksOf(message, index, provider), ...cached]);
  });
  if (messages.length === 0) throw new InvalidRequestError(`${provider}: at least one user message is required`, { provider });
  const body: Record<string, unknown> = { messages };
  if (system.length > 0) body.system = system;
  const inference: Record<string, unknown> = {};
  if (request.maxTokens !== undefined) inference.maxTokens = request.maxTokens;
  if (request.temperature !== undefined) inference.temperature = request.temperature;
  if (request.topP !== undefined) inference.topP = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) inference.stopSequences = request.stop;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  const toolConfig = toToolConfig(request, messages);
  if (toolConfig) body.toolConfig = toolConfig;
  return body;
}

/**
 * What Converse's `inferenceConfig` and `toolConfig` have no field for: accepted only at its no-op value, refused
 * naming it otherwise, never dropped (top-k lives in per-model fields; a client's routine `topK` is left out).
 */
function refuseUnsupported(request: GenerateRequest, provider: string): void {
  const unsupported: Array<[string, unknown, unknown]> = [
    ['seed', request.seed, undefined],
    ['frequency_penalty', request.frequencyPenalty, 0],
    ['presence_penalty', request.presencePenalty, 0],
    ['top_k', request.topKOptional ? undefined : request.topK, undefined],
    ['parallel_tool_calls', request.parallelToolCalls, true],
  ];
  for (const [name, value, noOp] of unsupported) {
    if (value !== undefined && value !== noOp) throw new InvalidRequestError(`${provider}: bedrock does not support ${name}`, { provider, param: name });
  }
}

function blocksOf(message: ChatMessage, index: number, provider: string): Block[] {
  switch (message.role) {
    case 'user':
      if (typeof message.content === 'string') return [{ text: message.content }];
      // Converse refuses a document without a text block beside it (a ValidationException the caller would see as a 502).
      if (message.content.some((part) => part.type === 'document') && !message.content.some((part) => part.type === 'text')) {
        throw new InvalidRequestError(`${provider}: messages[${index}].content: bedrock needs a text part beside a document`, { provider, param: 'messages' });
      }
      return message.content.map((part, p) => {
        if (part.type === 'text') return { text: part.text };
        if (part.type === 'document') return documentBlock(part.document, `messages[${index}].content[${p}]`, p, provider);
        if (part.image.kind !== 'base64') throw new InvalidRequestError(`${provider}: messages[${index}].content[${p}] image was not downloaded`, { provider });
        const format = IMAGE_FORMATS[part.image.mediaType];
        if (!format) {
          throw new InvalidRequestError(`${provider}: messages[${index}].content[${p}] image type ${part.image.mediaType} is not png, jpeg, gif or webp`, { provider, param: 'messages' });
        }
        return { image: { format, source: { bytes: part.image.data } } };
      });
    case 'assistant':
      return [
        ...(message.content ? [{ text: message.content }] : []),
        ...(message.toolCalls ?? []).map((call, c) => ({
          toolUse: { toolUseId: call.id, name: call.name, input: toolArgumentsObject(call.arguments, `messages[${index}].tool_calls[${c}].function.arguments`, provider) },
        })),
      ];
    case 'tool':
      return [{ toolResult: { toolUseId: message.toolCallId, content: [{ text: message.content }], ...(message.isError ? { status: 'error' } : {}) } }];
    default:
      return [];
  }
}

/**
 * Converse names every document; the name may hold only letters, digits, single spaces, hyphens, parentheses and
 * square brackets, so a file name is read down to those (`Q3 report.pdf` is `Q3 report`), and a missing one is
 * `document-<n>`.
 */
function documentBlock(document: DocumentSource, at: string, position: number, provider: string): Block {
  const format = DOCUMENT_FORMATS[document.mediaType];
  if (!format) {
    throw new InvalidRequestError(`${provider}: ${at} document type ${document.mediaType} is not one bedrock takes (${Object.keys(DOCUMENT_FORMATS).join(', ')})`, {
      provider,
      param: 'messages',
    });
  }
  const name = (document.name ?? '')
    .replace(/\.[A-Za-z0-9]{1,5}$/, '')
    .replace(/[^A-Za-z0-9\s\-()[\]]+/g, '-')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  return { document: { format, name: name || `document-${position + 1}`, source: { bytes: document.data } } };
}

/** Tools as toolSpecs; `none` sends no tools unless the history holds tool blocks (Converse then needs the specs). */
function toToolConfig(request: GenerateRequest, messages: ConverseMessage[]): Record<string, unknown> | undefined {
  const tools = request.tools ?? [];
  if (tools.length === 0) return undefined;
  const history = messages.some((m) => m.content.some((b) => 'toolUse' in b || 'toolResult' in b));
  if (request.toolChoice === 'none' && !history) return undefined;
  const config: Record<string, unknown> = {
    tools: tools.flatMap((tool) => [
      { toolSpec: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: { json: tool.parameters ?? { type: 'object', properties: {} } } } },
      ...(tool.cache ? [cachePoint(tool.cache)] : []),
    ]),
  };
  const choice = request.toolChoice;
  if (choice === 'required') config.toolChoice = { any: {} };
  else if (typeof choice === 'object') config.toolChoice = { tool: { name: choice.name } };
  else if (choice === 'auto') config.toolChoice = { auto: {} };
  return config;
}

const STOP_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
  model_context_window_exceeded: 'length',
};

export function mapBedrockStopReason(reason: unknown): FinishReason | undefined {
  return typeof reason === 'string' && /^[a-z_]{1,64}$/.test(reason) ? (STOP_REASONS[reason] ?? reason) : undefined;
}

/**
 * Converse usage: `inputTokens` excludes the cached part, which `cacheReadInputTokens` and `cacheWriteInputTokens`
 * count; both are reported as parts of the input, so the ledger prices reads and writes each at its own rate.
 */
export function toBedrockUsage(usage: unknown): TokenUsage | undefined {
  if (!isObject(usage)) return undefined;
  const uncached = numberOrUndefined(usage.inputTokens);
  const read = numberOrUndefined(usage.cacheReadInputTokens) ?? 0;
  const written = numberOrUndefined(usage.cacheWriteInputTokens) ?? 0;
  const outputTokens = numberOrUndefined(usage.outputTokens);
  const inputTokens = uncached === undefined ? undefined : uncached + read + written;
  return {
    inputTokens,
    outputTokens,
    totalTokens: numberOrUndefined(usage.totalTokens) ?? (inputTokens !== undefined && outputTokens !== undefined ? inputTokens + outputTokens : undefined),
    ...(read > 0 ? { cachedInputTokens: read } : {}),
    ...(written > 0 ? { cacheWriteInputTokens: written } : {}),
  };
}

export function fromConverseResponse(body: unknown, provider: string, model: string): GenerateResult {
  const message = isObject(body) && isObject(body.output) && isObject(body.output.message) ? body.output.message : undefined;
  if (!message || !Array.isArray(message.content)) throw new InvalidResponseError(`${provider}: upstream answer has no output message`, { provider });
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of message.content) {
    if (!isObject(block)) continue;
    if (typeof block.text === 'string') text += block.text;
    else if (isObject(block.toolUse)) {
      const { toolUseId, name, input } = block.toolUse;
      if (typeof toolUseId !== 'string' || typeof name !== 'string') throw new InvalidResponseError(`${provider}: upstream toolUse lacks an id or name`, { provider });
      toolCalls.push({ id: toolUseId, name, arguments: JSON.stringify(input ?? {}) });
    }
  }
  const finishReason = mapBedrockStopReason((body as Record<string, unknown>).stopReason);
  const usage = toBedrockUsage((body as Record<string, unknown>).usage);
  return {
    text,
    model,
    ...(finishReason ? { finishReason } : {}),
    ...(usage ? { usage } : {}),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
}
