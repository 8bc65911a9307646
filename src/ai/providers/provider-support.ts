/**
 * Kind-independent pieces every adapter needs: the health-check procedures, secret-free describe(),
 * strict embedding validation (never pad or truncate) and token usage read from an upstream answer.
 */
import { isObject, numberOrUndefined } from '../../common/json-values';
import { CapabilityNotSupportedError, ConnectionError, InvalidRequestError, InvalidResponseError, TollgateError } from '../errors';
import type { AiProvider, HealthResult, ProviderCapabilities, ProviderSettings, TokenUsage } from './ai-provider.interface';

/**
 * healthy: the model list answered and names every required model; unhealthy: it answered otherwise (or
 * refused us); unavailable: the transport failed.
 */
export async function checkHealth(
  provider: Pick<AiProvider, 'name' | 'kind' | 'listModels'>,
  requiredModels: string[],
): Promise<HealthResult> {
  const started = performance.now();
  const base = { provider: provider.name, kind: provider.kind, ...(requiredModels[0] ? { model: requiredModels[0] } : {}) };
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  try {
    const models = await provider.listModels();
    const ids = new Set(models.map((m) => m.id));
    // Gemini lists ids as `models/<id>` and Ollama as `<id>:latest`; either spelling counts as present.
    const missing = requiredModels.filter((m) => !ids.has(m) && !ids.has(`models/${m}`) && !ids.has(`${m}:latest`));
    if (missing.length > 0) {
      return {
        ...base,
        status: 'unhealthy',
        reachable: true,
        ready: false,
        error: `${provider.name}: model '${missing[0]}' is not in the provider's model list`,
        latencyMs: elapsed(),
      };
    }
    return { ...base, status: 'healthy', reachable: true, ready: true, latencyMs: elapsed() };
  } catch (error) {
    const unreachable = error instanceof ConnectionError;
    return {
      ...base,
      status: unreachable ? 'unavailable' : 'unhealthy',
      reachable: !unreachable,
      ready: false,
      // Our typed errors carry sanitized messages; anything else is summarised, never echoed.
      error: error instanceof TollgateError ? error.message : `${provider.name}: health check failed`,
      latencyMs: elapsed(),
    };
  }
}

/**
 * Health from asking the provider for each configured model by id (aliases resolve there): healthy when every
 * model answered, unavailable when the transport failed, unhealthy when it answered otherwise (or refused us).
 * `models[0]` is the model the result names.
 */
export async function probeModelHealth(
  provider: Pick<AiProvider, 'name' | 'kind'>,
  models: string[],
  fetchModel: (model: string) => Promise<unknown>,
): Promise<HealthResult> {
  const started = performance.now();
  const result = (status: HealthResult['status'], reachable: boolean, error?: string): HealthResult => ({
    provider: provider.name,
    kind: provider.kind,
    status,
    reachable,
    ready: status === 'healthy',
    model: models[0],
    error,
    latencyMs: Math.round(performance.now() - started),
  });
  try {
    for (const model of models) await fetchModel(model);
    return result('healthy', true);
  } catch (error) {
    if (!(error instanceof TollgateError)) throw error;
    if (error instanceof ConnectionError) return result('unavailable', false, error.message);
    return result('unhealthy', true, error.message);
  }
}

/** Settings for /v1/providers: no key, and no credentials or query string inside the URL. */
export function describeSettings(
  settings: Omit<ProviderSettings, 'apiKey'>,
  capabilities: ProviderCapabilities,
): Record<string, unknown> {
  return {
    name: settings.name,
    kind: settings.kind,
    ...(settings.url ? { url: safeUrl(settings.url) } : {}),
    ...(settings.chatModel ? { chatModel: settings.chatModel } : {}),
    ...(settings.embeddingModel ? { embeddingModel: settings.embeddingModel } : {}),
    ...(settings.models?.length ? { models: [...settings.models] } : {}),
    ...(settings.embeddingDimensions ? { embeddingDimensions: settings.embeddingDimensions } : {}),
    timeoutMs: settings.timeoutMs,
    capabilities: { ...capabilities },
  };
}

function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '[invalid url]';
  }
}

/**
 * Checks one vector per input, all finite numbers, one shared length, and exactly `dimensions` when set.
 * A mismatch is the provider's fault (InvalidResponseError), never something we repair.
 */
export function validateEmbeddings(
  vectors: unknown[],
  expectedCount: number,
  dimensions: number | undefined,
  provider: string,
): number[][] {
  const invalid = (what: string) => new InvalidResponseError(`${provider}: ${what}`, { provider });
  if (vectors.length !== expectedCount) {
    throw invalid(`returned ${vectors.length} embeddings for ${expectedCount} inputs`);
  }
  let length: number | undefined;
  for (const vector of vectors) {
    if (!Array.isArray(vector) || vector.length === 0) throw invalid('returned an embedding that is not a number list');
    for (const value of vector) {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw invalid('returned an embedding with a non-finite value');
      }
    }
    if (length !== undefined && vector.length !== length) throw invalid('returned embeddings of different lengths');
    length = vector.length;
    if (dimensions !== undefined && vector.length !== dimensions) {
      throw invalid(`returned ${vector.length}-dimension embeddings, expected ${dimensions}`);
    }
  }
  return vectors as number[][];
}

/**
 * The requests of one attempt sent at once (a single-input embedding model: one per input), settled together:
 * the first failure aborts the others, so none runs on uncharged, and is marked `othersSent` when another had
 * gone out (the upstream bills it, answered or cut), so the attempt is charged (decision D6).
 */
export function sendTogether<T>(
  count: number,
  request: { signal?: AbortSignal; onSent?: () => void },
  send: (index: number, options: { signal?: AbortSignal; onSent?: () => void }) => Promise<T>,
): Promise<T[]> {
  if (count === 1) return send(0, request).then((answer) => [answer]);
  const siblings = new AbortController();
  const signal = request.signal ? AbortSignal.any([request.signal, siblings.signal]) : siblings.signal;
  const sent = new Array<boolean>(count).fill(false);
  const sends = Array.from({ length: count }, (_, index) => {
    const onSent = () => {
      sent[index] = true;
      request.onSent?.();
    };
    return send(index, { signal, onSent }).catch((error: unknown) => {
      if (siblings.signal.aborted) throw error;
      siblings.abort();
      if (error instanceof TollgateError && sent.some((went, other) => went && other !== index)) error.othersSent = true;
      throw error;
    });
  });
  return Promise.all(sends);
}

/** A configured vector size must be a positive integer; checked when the adapter is built. */
export function checkEmbeddingDimensions(settings: Pick<ProviderSettings, 'name' | 'embeddingDimensions'>): void {
  const dimensions = settings.embeddingDimensions;
  if (dimensions !== undefined && (!Number.isInteger(dimensions) || dimensions <= 0)) {
    throw new TollgateError(`${settings.name}: embedding dimensions must be a positive integer`);
  }
}

/**
 * Token counts from an upstream usage object, by the provider's field names; undefined when it holds none.
 * Without a total field the total is the sum, when both counts are there.
 */
export function usageOf(value: unknown, fields: { input: string; output: string; total?: string }): TokenUsage | undefined {
  if (!isObject(value)) return undefined;
  const inputTokens = numberOrUndefined(value[fields.input]);
  const outputTokens = numberOrUndefined(value[fields.output]);
  const totalTokens =
    fields.total !== undefined
      ? numberOrUndefined(value[fields.total])
      : inputTokens !== undefined && outputTokens !== undefined
        ? inputTokens + outputTokens
        : undefined;
  if (inputTokens === undefined && outputTokens === undefined && totalTokens === undefined) return undefined;
  return { inputTokens, outputTokens, totalTokens };
}

/**
 * A tool call's arguments, the JSON text the model wrote, as the object Anthropic, Gemini and Ollama take
 * ("" means none). Anything else is refused naming `field` (`messages[1].tool_calls[0].function.arguments`).
 */
export function toolArgumentsObject(text: string, field: string, provider: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidRequestError(`${provider}: ${field} is not valid JSON`, { provider });
  }
  if (!isObject(parsed)) throw new InvalidRequestError(`${provider}: ${field} is not a JSON object`, { provider });
  return parsed;
}

/**
 * A document part given to a kind that takes none. The call gate refuses such calls before any adapter runs
 * (call-features.ts), so an adapter raising this is a request that bypassed the gate, never a silent drop.
 */
export function documentNotSupported(provider: string, kind: string, at: string): CapabilityNotSupportedError {
  return new CapabilityNotSupportedError(`${provider}: ${at}: ${kind} does not support document input`, { provider });
}
