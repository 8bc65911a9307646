/**
 * Kind-independent pieces every adapter needs: the health-check procedure, secret-free describe(),
 * and strict embedding validation (never pad or truncate).
 */
import { ConnectionError, InvalidResponseError, TollgateError } from '../errors';
import type { AiProvider, HealthResult, ProviderCapabilities, ProviderSettings } from './ai-provider.interface';

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
