/**
 * What a call needs of a provider before it is sent: the capability (generation, streaming, embeddings) and the
 * features beyond text its request uses. A provider without them is refused (or skipped by fallback), never sent
 * the request with a field dropped.
 */
import { CapabilityNotSupportedError, InvalidRequestError } from '../errors';
import type { AiProvider, ChatMessage, GenerateRequest, ModelFeature, NativeDialect, NativeRequest, ProviderKind } from '../providers/ai-provider.interface';

export type Capability = 'generate' | 'embeddings' | 'streaming';

const FEATURE_LABELS: Readonly<Record<ModelFeature, string>> = {
  tools: 'tool calling',
  structuredOutput: 'structured output (response_format)',
  vision: 'image input',
  documents: 'document input',
};

export function hasFeature(provider: AiProvider, feature: ModelFeature, model: string | undefined): boolean {
  // Documents are opt-in: an adapter that does not declare them never receives a document part.
  if (feature === 'documents' && provider.capabilities.documents !== true) return false;
  return provider.supportsFeature ? provider.supportsFeature(feature, model) : provider.capabilities[feature] === true;
}

/** Whether `provider` can take the call as a fallback candidate (judged on the model it would be asked for). */
export function canServe(
  provider: AiProvider,
  capability: Capability,
  features: readonly ModelFeature[],
  model: string | undefined,
  native?: NativeRequest,
): boolean {
  return provider.capabilities[capability] && features.every((feature) => hasFeature(provider, feature, model)) && takesNative(provider, model, native);
}

/** A request with a field only its own dialect has goes only to a provider that sends it as written (docs/decisions.md B16). */
function takesNative(provider: AiProvider, model: string | undefined, native: NativeRequest | undefined): boolean {
  return nativeRefusal(provider, model, native) === undefined;
}

/**
 * Why the provider cannot take the request's native fields, as the caller's 400 words it: one it does not speak the
 * dialect for, or one only the dialect's own API has (Claude on Vertex speaks Anthropic's, without the MCP connector).
 */
function nativeRefusal(provider: AiProvider, model: string | undefined, native: NativeRequest | undefined): string | undefined {
  if (native?.nativeOnly === undefined) return undefined;
  if (provider.speaksNative?.(native.dialect, model) !== true) return `${native.nativeOnly}: only ${DIALECT_UPSTREAMS[native.dialect]} takes it`;
  const own = DIALECT_OWN_API[native.dialect];
  if (native.firstPartyOnly !== undefined && provider.kind !== own.kind) return `${native.firstPartyOnly}: only ${own.name} takes it`;
  return undefined;
}

const DIALECT_UPSTREAMS: Readonly<Record<NativeDialect, string>> = { 'anthropic-messages': 'an Anthropic model', 'openai-responses': 'an OpenAI model' };
const DIALECT_OWN_API: Readonly<Record<NativeDialect, { kind: ProviderKind; name: string }>> = {
  'anthropic-messages': { kind: 'anthropic', name: "Anthropic's own API" },
  'openai-responses': { kind: 'openai', name: "OpenAI's own API" },
};

/** Refuses a call the routed provider cannot take: 400 `capability_not_supported` naming what is missing. */
export function assertServes(
  provider: AiProvider,
  capability: Capability,
  features: readonly ModelFeature[],
  model: string | undefined,
  native?: NativeRequest,
): void {
  if (!provider.capabilities[capability]) {
    throw new CapabilityNotSupportedError(`${provider.name}: ${provider.kind} does not support ${capabilityLabel(capability)}`, {
      provider: provider.name,
    });
  }
  const missing = features.find((feature) => !hasFeature(provider, feature, model));
  if (missing !== undefined) {
    const named = model ?? provider.describe().chatModel;
    throw new CapabilityNotSupportedError(
      `${provider.name}: ${provider.kind}${typeof named === 'string' ? ` model ${named}` : ''} does not support ${FEATURE_LABELS[missing]}`,
      { provider: provider.name },
    );
  }
  const refusal = nativeRefusal(provider, model, native);
  if (refusal !== undefined) {
    // The caller's field first, as the dialect's own 400s name it; a 400 of the caller's request, never a fallback.
    const named = model ?? provider.describe().chatModel;
    throw new InvalidRequestError(`${refusal}; ${typeof named === 'string' ? `model ${named} of ` : ''}provider ${provider.name} (${provider.kind}) does not`, {
      provider: provider.name,
    });
  }
}

/**
 * What the request needs beyond text. `messages` are the caller's own (templated prompts are text only).
 */
export function requiredFeatures(
  request: Pick<GenerateRequest, 'tools' | 'toolChoice' | 'responseFormat'>,
  messages: readonly ChatMessage[],
): ModelFeature[] {
  const features: ModelFeature[] = [];
  const toolTurns = messages.some((message) => message.role === 'tool' || (message.role === 'assistant' && message.toolCalls?.length));
  if (request.tools?.length || request.toolChoice !== undefined || toolTurns) features.push('tools');
  if (request.responseFormat !== undefined && request.responseFormat.type !== 'text') features.push('structuredOutput');
  const images = messages.some(
    (message) => message.role === 'user' && Array.isArray(message.content) && message.content.some((part) => part.type === 'image'),
  );
  if (images) features.push('vision');
  const documents = messages.some(
    (message) => message.role === 'user' && Array.isArray(message.content) && message.content.some((part) => part.type === 'document'),
  );
  if (documents) features.push('documents');
  return features;
}

function capabilityLabel(capability: Capability): string {
  if (capability === 'streaming') return 'streaming generation';
  return capability === 'embeddings' ? 'embeddings' : 'text generation';
}

/** The model a request names, else the registration's configured one. */
export function configuredModel(provider: AiProvider, requested: string | undefined, setting: 'chatModel' | 'embeddingModel'): string {
  if (requested !== undefined) return requested;
  const configured = provider.describe()[setting];
  return typeof configured === 'string' ? configured : 'unknown';
}
