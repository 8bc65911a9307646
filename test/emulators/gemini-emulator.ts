/**
 * Gemini (Generative Language API v1beta) emulator: `x-goog-api-key` auth answered the real way (a wrong
 * key is 400 INVALID_ARGUMENT with reason API_KEY_INVALID), `generateContent` and `batchEmbedContents`
 * with request validation, model listing with page tokens, and Google's error body
 * `{"error":{"code","message","status","details"}}`. Function calling as documented: `tools[].functionDeclarations`
 * (`parameters` or `parametersJsonSchema`, not both), `toolConfig.functionCallingConfig`, `functionCall` parts in
 * model turns answered by as many `functionResponse` parts in the user turn right after; with tools it answers
 * with functionCall parts (finishReason still STOP), after function responses with text. `inlineData` images,
 * JSON answers shaped by `responseJsonSchema` / `responseSchema`. Text is cut at `maxOutputTokens` (one word per
 * token) with finishReason MAX_TOKENS.
 */
import { EmulatorReply, EmulatorRequest, EmulatorServer, startEmulator } from './emulator-server';

/** Appears in every emulator error body, so tests can prove no upstream body reaches an error message. */
export const GEMINI_BODY_MARKER = 'gemini-upstream-body-41c9';
export const GEMINI_EMULATOR_KEY = 'AIzaEmulatorKey0123456789';
const GEMINI_PATH_PREFIX = '/v1beta';

export interface GeminiEmulatorOptions {
  apiKey?: string;
  chatModels?: string[];
  embeddingModels?: string[];
  /** Length of returned vectors when the request names no outputDimensionality. */
  dimensions?: number;
  reply?: string;
  /** When set, streamed answers send one event and then an error event with this HTTP code. */
  streamErrorCode?: number;
  /** The calls answered when tools are declared; by default one call of the first callable function. */
  functionCalls?: Array<{ name: string; args?: Record<string, unknown> }>;
  /**
   * Behave like a Gemini 3 model: the first functionCall part of an answer carries a `thoughtSignature`, and a
   * replayed model turn whose first functionCall part lacks it is a 400.
   */
  signFunctionCalls?: boolean;
  /** Reported as `thoughtsTokenCount` (thinking, billed as output, not in candidatesTokenCount). */
  thoughtsTokens?: number;
  /** Reported as `cachedContentTokenCount` (the part of the prompt served from a context cache). */
  cachedTokens?: number;
}

export interface GeminiEmulator {
  server: EmulatorServer;
  /** Base URL including the API version, as an adapter expects it. */
  url: string;
  /** Live settings: tests may change them between requests. */
  options: GeminiEmulatorOptions & Required<Omit<GeminiEmulatorOptions, 'streamErrorCode' | 'functionCalls' | 'signFunctionCalls' | 'thoughtsTokens' | 'cachedTokens'>>;
  close(): Promise<void>;
}

/** Google's error body; the marker stands in for upstream text that must never be surfaced. */
export function geminiError(
  code: number,
  status: string,
  message: string,
  details?: unknown[],
): Record<string, unknown> {
  return { error: { code, message: `${message} [${GEMINI_BODY_MARKER}]`, status, ...(details ? { details } : {}) } };
}

function fail(code: number, status: string, message: string, details?: unknown[]): EmulatorReply {
  return { status: code, body: geminiError(code, status, message, details) };
}

const MODEL_PATH =
  /^\/v1beta\/models\/(?<model>[^/:]+):(?<method>generateContent|streamGenerateContent|batchEmbedContents)$/;

export async function startGeminiEmulator(options: GeminiEmulatorOptions = {}): Promise<GeminiEmulator> {
  const settings: GeminiEmulator['options'] = {
    apiKey: options.apiKey ?? GEMINI_EMULATOR_KEY,
    chatModels: options.chatModels ?? ['gemini-2.5-flash', 'gemini-2.5-pro'],
    embeddingModels: options.embeddingModels ?? ['gemini-embedding-001'],
    dimensions: options.dimensions ?? 8,
    reply: options.reply ?? 'Hello from the Gemini emulator',
    streamErrorCode: options.streamErrorCode,
    functionCalls: options.functionCalls,
    signFunctionCalls: options.signFunctionCalls,
    thoughtsTokens: options.thoughtsTokens,
    cachedTokens: options.cachedTokens,
  };
  const server = await startEmulator();
  const allModels = () => [...settings.chatModels, ...settings.embeddingModels];

  const guard = (request: EmulatorRequest): EmulatorReply | undefined => {
    const key = request.headers['x-goog-api-key'] ?? request.query.get('key') ?? undefined;
    if (key === undefined) {
      return fail(
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity).",
      );
    }
    if (key !== settings.apiKey) {
      return fail(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'generativelanguage.googleapis.com' },
        },
      ]);
    }
    return undefined;
  };

  server.route('POST', MODEL_PATH, (request) => {
    const denied = guard(request);
    if (denied) return denied;
    const { model, method } = request.params;
    const supported = method === 'batchEmbedContents' ? settings.embeddingModels : settings.chatModels;
    if (!supported.includes(model)) {
      return fail(
        404,
        'NOT_FOUND',
        `models/${model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
      );
    }
    if (method === 'batchEmbedContents') return batchEmbedContents(request.body, model, settings.dimensions);
    const answer = generateContent(request.body, model, settings);
    if (method === 'generateContent' || answer.status !== undefined) return answer;
    return streamAnswer(
      answer.body as Record<string, unknown>,
      request.query.get('alt') === 'sse',
      settings.streamErrorCode,
    );
  });

  server.route('GET', '/v1beta/models', (request) => {
    const denied = guard(request);
    if (denied) return denied;
    const pageSize = Math.min(Number(request.query.get('pageSize') ?? '50'), 1000);
    const start = Number(request.query.get('pageToken') ?? '0');
    const page = allModels().slice(start, start + pageSize);
    const next = start + pageSize < allModels().length ? String(start + pageSize) : undefined;
    return { body: { models: page.map((m) => modelObject(m, settings)), ...(next ? { nextPageToken: next } : {}) } };
  });

  server.route('GET', /^\/v1beta\/models\/(?<model>[^/:]+)$/, (request) => {
    const denied = guard(request);
    if (denied) return denied;
    const { model } = request.params;
    if (!allModels().includes(model))
      return fail(404, 'NOT_FOUND', `models/${model} is not found for API version v1beta`);
    return { body: modelObject(model, settings) };
  });

  return { server, url: server.url + GEMINI_PATH_PREFIX, options: settings, close: () => server.close() };
}

/**
 * `streamGenerateContent` splits the answer into partial responses, the last with finishReason and usage:
 * text word by word, each functionCall part whole in its own event. With `alt=sse` each is a `data:` event
 * (CRLF framed, as Google sends them); otherwise one JSON array.
 */
function streamAnswer(full: Record<string, unknown>, sse: boolean, errorCode?: number): EmulatorReply {
  const [candidate] = full.candidates as Array<{ content: { parts: Array<Record<string, unknown>> }; finishReason: string }>;
  const pieces: Array<Record<string, unknown>> = candidate.content.parts.flatMap((part) =>
    typeof part.text === 'string' ? part.text.split(' ').map((word, i) => ({ text: i === 0 ? word : ` ${word}` })) : [part],
  );
  const partials: unknown[] = pieces.map((piece) => ({
    candidates: [{ content: { parts: [piece], role: 'model' }, index: 0 }],
    modelVersion: full.modelVersion,
  }));
  const last = partials[partials.length - 1] as { candidates: Array<Record<string, unknown>> };
  last.candidates[0].finishReason = candidate.finishReason;
  Object.assign(last, { usageMetadata: full.usageMetadata });
  if (errorCode !== undefined)
    partials.splice(1, partials.length, geminiError(errorCode, 'UNAVAILABLE', 'stream failed'));
  if (!sse) return { body: partials };
  return {
    headers: { 'content-type': 'text/event-stream' },
    chunks: partials.map((p) => `data: ${JSON.stringify(p)}\r\n\r\n`),
  };
}

function modelObject(model: string, settings: GeminiEmulator['options']): Record<string, unknown> {
  const embedding = settings.embeddingModels.includes(model);
  return {
    name: `models/${model}`,
    version: '001',
    displayName: model,
    supportedGenerationMethods: embedding ? ['embedContent', 'batchEmbedContents'] : ['generateContent', 'countTokens'],
  };
}

const GENERATION_CONFIG_KEYS = new Set([
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'stopSequences',
  'candidateCount',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'thinkingConfig',
]);

/** Base64, as Google's opaque signatures are. */
export const EMULATOR_THOUGHT_SIGNATURE = 'CiQBcsjafEmulatorSignatureAAECAwQFBgcICQoLDA0ODxA=';
/** The value Google documents for calls Gemini did not sign (another model's, or hand-built history). */
const PLACEHOLDER_SIGNATURE = 'skip_thought_signature_validator';
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
const FUNCTION_CALLING_MODES = new Set(['AUTO', 'ANY', 'NONE', 'VALIDATED']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const invalid = (message: string) => fail(400, 'INVALID_ARGUMENT', message);

/** One part holds exactly one kind of data; the checks are the ones the real API answers with a 400. */
function partProblem(part: unknown, role: string, where: string): string | undefined {
  if (!isJson(part)) return `* ${where}: part must be an object\n`;
  const kinds = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'].filter((k) => part[k] !== undefined);
  if (kinds.length !== 1) return `* ${where}.data: required oneof field 'data' must have one initialized field\n`;
  const [kind] = kinds;
  if (kind === 'text' && typeof part.text !== 'string') return `Invalid value at '${where}.text' (TYPE_STRING)`;
  if (kind === 'inlineData') {
    const inline = part.inlineData;
    if (!isJson(inline) || typeof inline.mimeType !== 'string' || typeof inline.data !== 'string') return `* ${where}.inline_data: mime_type and data are required\n`;
    if (inline.data === '' || !BASE64.test(inline.data)) return `Invalid value at '${where}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`;
  }
  if (kind === 'functionCall') {
    if (role !== 'model') return 'Please ensure that function call turns come from the model.';
    const call = part.functionCall;
    if (!isJson(call) || typeof call.name !== 'string' || (call.args !== undefined && !isJson(call.args))) return `* ${where}.function_call: name is required and args must be an object\n`;
  }
  if (kind === 'functionResponse') {
    if (role !== 'user') return 'Please ensure that function response turns come from the user.';
    const response = part.functionResponse;
    if (!isJson(response) || typeof response.name !== 'string' || !isJson(response.response)) return `* ${where}.function_response: name and an object response are required\n`;
  }
  return undefined;
}

/** Every function response turn answers the function call turn just before it, part for part. */
function turnProblem(contents: Json[]): string | undefined {
  for (const [i, content] of contents.entries()) {
    const parts = content.parts as Json[];
    const responses = parts.filter((p) => p.functionResponse !== undefined).length;
    if (responses === 0) continue;
    const calls = i > 0 ? (contents[i - 1].parts as Json[]).filter((p) => p.functionCall !== undefined).length : 0;
    if (calls === 0) {
      return 'Please ensure that function response turn comes immediately after a function call turn.';
    }
    if (calls !== responses) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    }
  }
  return undefined;
}

/** The declared function names, or the problem the real API reports. */
function declaredFunctions(tools: unknown): { names: string[]; schemas: Map<string, unknown> } | string {
  const names: string[] = [];
  const schemas = new Map<string, unknown>();
  if (tools === undefined) return { names, schemas };
  if (!Array.isArray(tools)) return "Invalid JSON payload received. Invalid value at 'tools'";
  for (const [t, tool] of tools.entries()) {
    if (!isJson(tool) || !Array.isArray(tool.functionDeclarations)) return `* GenerateContentRequest.tools[${t}]: unsupported tool\n`;
    for (const [f, declaration] of tool.functionDeclarations.entries()) {
      const where = `GenerateContentRequest.tools[${t}].function_declarations[${f}]`;
      if (!isJson(declaration) || typeof declaration.name !== 'string' || !FUNCTION_NAME.test(declaration.name)) {
        return `* ${where}.name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:) or dashes (-), with a maximum length of 64.\n`;
      }
      if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
        return `* ${where}: parameters and parameters_json_schema are mutually exclusive\n`;
      }
      names.push(declaration.name);
      schemas.set(declaration.name, declaration.parametersJsonSchema ?? declaration.parameters);
    }
  }
  return { names, schemas };
}

/** A value matching a (JSON or OpenAPI-subset) schema, so structured answers and call arguments parse. */
function sampleFor(schema: unknown): unknown {
  if (!isJson(schema)) return {};
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? 'object')).toLowerCase();
  if (type === 'string') return 'emulated';
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [sampleFor(schema.items)];
  const properties = isJson(schema.properties) ? schema.properties : {};
  return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, sampleFor(value)]));
}

function generateContent(body: unknown, model: string, settings: GeminiEmulator['options']): EmulatorReply {
  const b = (body ?? {}) as Json;
  if (!Array.isArray(b.contents) || b.contents.length === 0) {
    return invalid('* GenerateContentRequest.contents: contents is not specified\n');
  }
  for (const [i, content] of b.contents.entries()) {
    const role = isJson(content) ? (content.role ?? 'user') : undefined;
    if (role !== 'user' && role !== 'model') return invalid('Please use a valid role: user, model.');
    const parts = (content as Json).parts;
    if (!Array.isArray(parts) || parts.length === 0) {
      return invalid(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`);
    }
    for (const [p, part] of parts.entries()) {
      const problem = partProblem(part, role, `GenerateContentRequest.contents[${i}].parts[${p}]`);
      if (problem) return invalid(problem);
    }
  }
  const contents = b.contents as Json[];
  const turns = turnProblem(contents);
  if (turns) return invalid(turns);
  if (settings.signFunctionCalls) {
    for (const [i, content] of contents.entries()) {
      const firstCall = (content.parts as Json[]).findIndex((p) => p.functionCall !== undefined);
      const signature = firstCall >= 0 ? (content.parts as Json[])[firstCall].thoughtSignature : undefined;
      if (firstCall >= 0 && signature !== EMULATOR_THOUGHT_SIGNATURE && signature !== PLACEHOLDER_SIGNATURE) {
        return invalid(`Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String(((content.parts as Json[])[firstCall].functionCall as Json).name)}\`, position ${i + 1}.`);
      }
    }
  }
  if (b.systemInstruction !== undefined) {
    const parts = isJson(b.systemInstruction) ? b.systemInstruction.parts : undefined;
    if (!Array.isArray(parts) || parts.length === 0 || !parts.every((p) => typeof p?.text === 'string')) {
      return invalid('* GenerateContentRequest.system_instruction.parts: must not be empty.\n');
    }
  }
  const declared = declaredFunctions(b.tools);
  if (typeof declared === 'string') return invalid(declared);
  let mode = 'AUTO';
  let callable = declared.names;
  if (b.toolConfig !== undefined) {
    const config = isJson(b.toolConfig) ? b.toolConfig.functionCallingConfig : undefined;
    if (!isJson(config) || !FUNCTION_CALLING_MODES.has(String(config.mode ?? 'AUTO'))) {
      return invalid("Invalid value at 'tool_config.function_calling_config.mode'");
    }
    mode = String(config.mode ?? 'AUTO');
    if (config.allowedFunctionNames !== undefined) {
      if (mode !== 'ANY') return invalid('* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: only allowed when mode is ANY.\n');
      const allowed = config.allowedFunctionNames as unknown[];
      if (!allowed.every((name) => declared.names.includes(String(name)))) {
        return invalid('* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: must name declared functions.\n');
      }
      callable = allowed.map(String);
    }
  }
  const config = (b.generationConfig ?? {}) as Json;
  for (const key of Object.keys(config)) {
    if (!GENERATION_CONFIG_KEYS.has(key)) {
      return invalid(`Invalid JSON payload received. Unknown name "${key}" at 'generation_config': Cannot find field.`);
    }
  }
  const schema = config.responseJsonSchema ?? config.responseSchema;
  if (config.responseJsonSchema !== undefined && config.responseSchema !== undefined) {
    return invalid('* GenerateContentRequest.generation_config: response_schema and response_json_schema are mutually exclusive.\n');
  }
  if (schema !== undefined && config.responseMimeType !== 'application/json') {
    return invalid('* GenerateContentRequest.generation_config.response_mime_type: must be application/json when a response schema is set.\n');
  }

  const answered = (contents[contents.length - 1].parts as Json[]).some((p) => p.functionResponse !== undefined);
  let parts: Json[];
  if (!answered && callable.length > 0 && mode !== 'NONE') {
    const calls = settings.functionCalls ?? [{ name: callable[0] }];
    parts = calls.map((call, i) => ({
      functionCall: { name: call.name, args: call.args ?? sampleFor(declared.schemas.get(call.name)) },
      // Parallel calls: only the first part is signed.
      ...(settings.signFunctionCalls && i === 0 ? { thoughtSignature: EMULATOR_THOUGHT_SIGNATURE } : {}),
    }));
  } else if (config.responseMimeType === 'application/json') {
    parts = [{ text: JSON.stringify(schema !== undefined ? sampleFor(schema) : { reply: settings.reply }) }];
  } else {
    parts = [{ text: settings.reply }];
  }
  // One word per token: text longer than maxOutputTokens is cut there, which Gemini reports as MAX_TOKENS.
  const words = parts.length === 1 && typeof parts[0].text === 'string' ? parts[0].text.split(' ') : [];
  const budget = typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : Infinity;
  const truncated = words.length > budget;
  if (truncated) parts = [{ text: words.slice(0, budget).join(' ') }];
  const promptTokenCount = JSON.stringify(b.contents).length;
  const candidatesTokenCount = settings.reply.split(' ').length;
  return {
    body: {
      candidates: [{ content: { parts, role: 'model' }, finishReason: truncated ? 'MAX_TOKENS' : 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount,
        candidatesTokenCount,
        ...(settings.thoughtsTokens !== undefined ? { thoughtsTokenCount: settings.thoughtsTokens } : {}),
        ...(settings.cachedTokens !== undefined ? { cachedContentTokenCount: settings.cachedTokens } : {}),
        totalTokenCount: promptTokenCount + candidatesTokenCount + (settings.thoughtsTokens ?? 0),
      },
      modelVersion: model,
      responseId: 'emulator-response',
    },
  };
}

/** Embedding requests take text parts only. */
function validContent(content: unknown): boolean {
  const parts = isJson(content) ? content.parts : undefined;
  return Array.isArray(parts) && parts.length > 0 && parts.every((p) => typeof p?.text === 'string');
}

function batchEmbedContents(body: unknown, model: string, defaultDimensions: number): EmulatorReply {
  const requests = (body as { requests?: unknown })?.requests;
  if (!Array.isArray(requests) || requests.length === 0) {
    return fail(400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: requests is not specified\n');
  }
  const embeddings: Array<{ values: number[] }> = [];
  for (const [i, entry] of requests.entries()) {
    const r = entry as Record<string, unknown>;
    if (r?.model !== `models/${model}`) {
      return fail(
        400,
        'INVALID_ARGUMENT',
        `* BatchEmbedContentsRequest.requests[${i}].model: model must match the batch model.\n`,
      );
    }
    if (!validContent(r.content)) {
      return fail(
        400,
        'INVALID_ARGUMENT',
        `* BatchEmbedContentsRequest.requests[${i}].content: content is not specified\n`,
      );
    }
    const dimensions = r.outputDimensionality ?? defaultDimensions;
    if (!Number.isInteger(dimensions) || (dimensions as number) < 1) {
      return fail(400, 'INVALID_ARGUMENT', 'outputDimensionality must be a positive integer');
    }
    const text = (r.content as { parts: Array<{ text: string }> }).parts.map((p) => p.text).join('');
    embeddings.push({ values: vectorFor(text, dimensions as number) });
  }
  return { body: { embeddings } };
}

/** Deterministic per text, so tests can tell inputs apart and check order. */
export function vectorFor(text: string, dimensions: number): number[] {
  let seed = 0;
  for (const char of text) seed = (seed * 31 + char.charCodeAt(0)) % 1000;
  return Array.from({ length: dimensions }, (_, i) => ((seed + i) % 1000) / 1000);
}
