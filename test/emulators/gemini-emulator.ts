/**
 * Gemini (Generative Language API v1beta) emulator: `x-goog-api-key` auth answered the real way (a wrong
 * key is 400 INVALID_ARGUMENT with reason API_KEY_INVALID), `generateContent` and `batchEmbedContents`
 * with request validation, model listing with page tokens, and Google's error body
 * `{"error":{"code","message","status","details"}}`.
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
}

export interface GeminiEmulator {
  server: EmulatorServer;
  /** Base URL including the API version, as an adapter expects it. */
  url: string;
  /** Live settings: tests may change them between requests. */
  options: GeminiEmulatorOptions & Required<Omit<GeminiEmulatorOptions, 'streamErrorCode'>>;
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
    const answer = generateContent(request.body, model, settings.reply);
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
 * `streamGenerateContent` splits the answer into partial responses, the last with finishReason and usage.
 * With `alt=sse` each is a `data:` event (CRLF framed, as Google sends them); otherwise one JSON array.
 */
function streamAnswer(full: Record<string, unknown>, sse: boolean, errorCode?: number): EmulatorReply {
  const [candidate] = full.candidates as Array<{ content: { parts: Array<{ text: string }> } }>;
  const words = candidate.content.parts[0].text.split(' ');
  const partials: unknown[] = words.map((word, i) => ({
    candidates: [{ content: { parts: [{ text: i === 0 ? word : ` ${word}` }], role: 'model' }, index: 0 }],
    modelVersion: full.modelVersion,
  }));
  const last = partials[partials.length - 1] as { candidates: Array<Record<string, unknown>> };
  last.candidates[0].finishReason = 'STOP';
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
]);

function validContent(content: unknown): boolean {
  if (typeof content !== 'object' || content === null) return false;
  const parts = (content as { parts?: unknown }).parts;
  return Array.isArray(parts) && parts.length > 0 && parts.every((p) => typeof p?.text === 'string');
}

function generateContent(body: unknown, model: string, reply: string): EmulatorReply {
  const b = (body ?? {}) as Record<string, unknown>;
  if (!Array.isArray(b.contents) || b.contents.length === 0) {
    return fail(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified\n');
  }
  for (const [i, content] of b.contents.entries()) {
    const role = (content as { role?: unknown })?.role;
    if (role !== undefined && role !== 'user' && role !== 'model') {
      return fail(400, 'INVALID_ARGUMENT', 'Please use a valid role: user, model.');
    }
    if (!validContent(content)) {
      return fail(
        400,
        'INVALID_ARGUMENT',
        `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`,
      );
    }
  }
  if (b.systemInstruction !== undefined && !validContent(b.systemInstruction)) {
    return fail(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.system_instruction.parts: must not be empty.\n');
  }
  if (b.generationConfig !== undefined) {
    for (const key of Object.keys(b.generationConfig as object)) {
      if (!GENERATION_CONFIG_KEYS.has(key)) {
        return fail(
          400,
          'INVALID_ARGUMENT',
          `Invalid JSON payload received. Unknown name "${key}" at 'generation_config': Cannot find field.`,
        );
      }
    }
  }
  const promptTokenCount = JSON.stringify(b.contents).length;
  const candidatesTokenCount = reply.split(' ').length;
  return {
    body: {
      candidates: [{ content: { parts: [{ text: reply }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount,
        candidatesTokenCount,
        totalTokenCount: promptTokenCount + candidatesTokenCount,
      },
      modelVersion: model,
      responseId: 'emulator-response',
    },
  };
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
