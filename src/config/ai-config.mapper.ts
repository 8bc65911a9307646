/**
 * `ai:`, `providers:`, `prompts:` and `api:` sections (snake_case, validated, environment applied) ->
 * AiSettings. Rules the schema cannot express (kind from the name, required URL, registered names)
 * are checked here, with the key in the message.
 */
import { dirname, resolve } from 'node:path';
import { AI_DEFAULTS } from '../ai/ai.defaults';
import { PROVIDER_KINDS, type ProviderKind, type ProviderSettings } from '../ai/providers/ai-provider.interface';
import { DEFAULT_EXCLUDED_CONTEXT_FIELDS } from '../ai/prompts/context-rendering';
import {
  DEFAULT_PROMPT_TEMPLATES,
  loadPromptTemplatesFile,
  type PromptTemplates,
  type PromptTemplateSet,
  PromptTemplatesFileError,
} from '../ai/prompts/prompt-templates';
import { ConfigError } from './config.error';
import type { DeploymentHealthSettings } from '../ai/client/ai-client.options';
import { DEFAULT_COOLDOWN_POLICY } from '../ai/client/deployment-health';
import type { DeploymentAliasSettings } from '../ai/client/model-routing';
import type { AiSection, AiSettings, ConfigDocument, ConfigSource, PromptTemplatesSection, ProviderSection, ResponseStoreSettings } from './config.types';
import { toDocumentBounds, toSearchSettings } from './search-config.mapper';
import { toAgentSettings } from './agent-config.mapper';
import { toImageDownloadLimits } from './images-config.mapper';

/** The gateway's defaults in the units of the `ai:` section, which counts time in seconds. */
export const DEFAULT_AI_SETTINGS = Object.freeze({
  timeoutSeconds: AI_DEFAULTS.timeoutMs / 1000,
  retryAttempts: AI_DEFAULTS.retryAttempts,
  retryDelaySeconds: AI_DEFAULTS.retryDelayMs / 1000,
  defaultProvider: AI_DEFAULTS.defaultProvider,
  healthCacheSeconds: AI_DEFAULTS.healthCacheMs / 1000,
  maxBatchInputs: AI_DEFAULTS.maxBatchInputs,
  responseRetentionSeconds: AI_DEFAULTS.responseRetentionMs / 1000,
  maxStoredResponses: AI_DEFAULTS.maxStoredResponses,
});

export function toAiSettings(document: ConfigDocument, context: ConfigSource): AiSettings {
  const problems: string[] = [];
  const ai = document.ai ?? {};
  const timeoutSeconds = ai.timeout ?? DEFAULT_AI_SETTINGS.timeoutSeconds;

  const providers: ProviderSettings[] = [];
  const configDirectory = context.filePath ? dirname(context.filePath) : context.cwd;
  for (const [name, section] of Object.entries(document.providers ?? {})) {
    const settings = toProviderSettings(name, section, timeoutSeconds, configDirectory, problems);
    if (settings) providers.push(settings);
  }
  // Nothing configured: the local model server at its default address (docs/decisions.md B1).
  if (providers.length === 0 && document.providers === undefined) {
    providers.push({ name: 'ollama', kind: 'ollama', timeoutMs: timeoutSeconds * 1000 });
  }
  const names = providers.map((p) => p.name);

  const defaultProvider =
    ai.default_provider ?? (names.includes(DEFAULT_AI_SETTINGS.defaultProvider) ? DEFAULT_AI_SETTINGS.defaultProvider : names[0]);
  if (ai.default_provider !== undefined && !names.includes(ai.default_provider)) {
    problems.push(`ai.default_provider: '${ai.default_provider}' is not a registered provider (registered: ${names.join(', ') || 'none'})`);
  }
  (ai.fallback_providers ?? []).forEach((name, index) => {
    if (!names.includes(name)) problems.push(`ai.fallback_providers[${index}]: '${name}' is not a registered provider`);
  });
  for (const [alias, setting] of Object.entries(ai.model_aliases ?? {})) {
    const [path, targets]: [string, readonly string[]] = isTargetList(setting)
      ? [`ai.model_aliases.${alias}`, setting]
      : [`ai.model_aliases.${alias}.deployments`, setting.deployments.map((entry) => (typeof entry === 'string' ? entry : entry.target))];
    targets.forEach((target, index) => {
      const provider = target.slice(0, target.indexOf('/'));
      if (!names.includes(provider)) {
        problems.push(`${path}[${index}]: '${provider}' in '${target}' is not a registered provider (registered: ${names.join(', ') || 'none'})`);
      }
    });
  }
  const deployments = toDeploymentHealthSettings(ai.deployment_health, problems);

  const apiAuth = document.api?.auth ?? 'token';
  if (apiAuth === 'jwt' && !document.auth) {
    problems.push('api.auth: jwt needs the AuthModule configured (an auth: section or JWT_SECRET)');
  }

  const prompts = toPromptTemplateSet(document, context, problems);
  const responses = toResponseStoreSettings(ai.responses, problems);
  if (problems.length) throw new ConfigError(problems.map((problem) => `${context.source}: ${problem}`));
  const search = toSearchSettings(document, context.source);

  return {
    providers,
    defaultProvider: defaultProvider ?? DEFAULT_AI_SETTINGS.defaultProvider,
    retryAttempts: ai.retry_attempts ?? DEFAULT_AI_SETTINGS.retryAttempts,
    retryDelayMs: Math.round((ai.retry_delay ?? DEFAULT_AI_SETTINGS.retryDelaySeconds) * 1000),
    enableFallback: ai.enable_fallback ?? AI_DEFAULTS.enableFallback,
    ...(ai.fallback_providers ? { fallbackProviders: ai.fallback_providers } : {}),
    ...(ai.model_aliases ? { modelAliases: ai.model_aliases } : {}),
    ...(deployments ? { deployments } : {}),
    sensitiveKeys: ai.sensitive_keys ?? [],
    excludedContextFields: ai.excluded_context_fields ?? [...DEFAULT_EXCLUDED_CONTEXT_FIELDS],
    healthCacheMs: Math.round((ai.health_cache_ttl ?? DEFAULT_AI_SETTINGS.healthCacheSeconds) * 1000),
    maxBatchInputs: ai.max_batch_inputs ?? DEFAULT_AI_SETTINGS.maxBatchInputs,
    responses,
    images: toImageDownloadLimits(ai.images),
    prompts: prompts ?? { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
    api: { auth: apiAuth, ...(document.api?.token !== undefined ? { token: document.api.token } : {}) },
    search,
    documents: toDocumentBounds(document),
    agent: toAgentSettings(document, context),
  };
}

function isTargetList(setting: readonly string[] | DeploymentAliasSettings): setting is readonly string[] {
  return Array.isArray(setting);
}

/** `ai.deployment_health` in milliseconds; undefined when the section is absent (the client's defaults). */
function toDeploymentHealthSettings(section: AiSection['deployment_health'], problems: string[]): DeploymentHealthSettings | undefined {
  if (section === undefined) return undefined;
  if (section.store === 'redis' && section.url === undefined) problems.push('ai.deployment_health.url: required with store: redis');
  return {
    cooldown: {
      failures: section.failures ?? DEFAULT_COOLDOWN_POLICY.failures,
      window: section.window ?? DEFAULT_COOLDOWN_POLICY.window,
      cooldownMs: section.cooldown !== undefined ? Math.round(section.cooldown * 1000) : DEFAULT_COOLDOWN_POLICY.cooldownMs,
      honourRetryAfter: section.retry_after ?? DEFAULT_COOLDOWN_POLICY.honourRetryAfter,
    },
    waitMs: Math.round((section.wait ?? 0) * 1000),
    ...(section.store === 'redis' && section.url !== undefined ? { redisUrl: section.url } : {}),
    ...(section.key_prefix !== undefined ? { keyPrefix: section.key_prefix } : {}),
  };
}

function toResponseStoreSettings(section: AiSection['responses'], problems: string[]): ResponseStoreSettings {
  const store = section?.store ?? 'memory';
  const url = section?.url;
  if (store !== 'memory') {
    const scheme = store === 'redis' ? /^rediss?:\/\// : /^postgres(ql)?:\/\//;
    if (url === undefined) problems.push(`ai.responses.url: is required with store: ${store}`);
    else if (!scheme.test(url)) problems.push(`ai.responses.url: must be a ${store === 'redis' ? 'redis://' : 'postgres://'} URL for store ${store}`);
  }
  if (store !== 'postgres' && section?.table !== undefined) problems.push('ai.responses.table: applies to store postgres only');
  return {
    store,
    ...(url !== undefined ? { url } : {}),
    keyPrefix: section?.key_prefix ?? AI_DEFAULTS.responseKeyPrefix,
    table: section?.table ?? AI_DEFAULTS.responseTable,
    retentionMs: Math.round((section?.retention ?? DEFAULT_AI_SETTINGS.responseRetentionSeconds) * 1000),
    maxStored: section?.max_stored ?? DEFAULT_AI_SETTINGS.maxStoredResponses,
  };
}

/** Each cloud kind's own section, and the kind it belongs to. */
const CLOUD_SECTIONS = { azure: 'azure_openai', vertex: 'vertex', bedrock: 'bedrock' } as const;

function toProviderSettings(
  name: string,
  section: ProviderSection,
  timeoutSeconds: number,
  configDirectory: string,
  problems: string[],
): ProviderSettings | undefined {
  const kind = section.kind ?? (PROVIDER_KINDS.includes(name as ProviderKind) ? (name as ProviderKind) : undefined);
  if (!kind) {
    problems.push(`providers.${name}.kind: is required (the name '${name}' is not a provider kind: ${PROVIDER_KINDS.join(', ')})`);
    return undefined;
  }
  if ((kind === 'openai_compatible' || kind === 'azure_openai') && section.url === undefined) {
    problems.push(`providers.${name}.url: is required for kind ${kind}`);
    return undefined;
  }
  for (const [key, owner] of Object.entries(CLOUD_SECTIONS)) {
    if (section[key as keyof typeof CLOUD_SECTIONS] !== undefined && kind !== owner) {
      problems.push(`providers.${name}.${key}: applies only to kind ${owner} (this entry is kind ${kind})`);
      return undefined;
    }
  }
  if ((kind === 'vertex' || kind === 'bedrock') && section[kind] === undefined) {
    problems.push(`providers.${name}.${kind}: is required for kind ${kind} (${kind === 'vertex' ? 'project and location' : 'region'})`);
    return undefined;
  }
  const chatModel = section.chat_model ?? section.model;
  return {
    name,
    kind,
    timeoutMs: Math.round((section.timeout ?? timeoutSeconds) * 1000),
    ...(section.url !== undefined ? { url: section.url } : {}),
    ...(section.api_key !== undefined ? { apiKey: section.api_key } : {}),
    ...(chatModel !== undefined ? { chatModel } : {}),
    ...(section.embedding_model !== undefined ? { embeddingModel: section.embedding_model } : {}),
    ...(section.models !== undefined ? { models: section.models } : {}),
    ...(section.embedding_dimensions !== undefined ? { embeddingDimensions: section.embedding_dimensions } : {}),
    ...cloudSettings(section, configDirectory),
  };
}

function cloudSettings(section: ProviderSection, configDirectory: string): Partial<ProviderSettings> {
  const { azure, vertex, bedrock } = section;
  if (azure) {
    return {
      azure: {
        ...(azure.api_version !== undefined ? { apiVersion: azure.api_version } : {}),
        ...(azure.deployments !== undefined ? { deployments: azure.deployments } : {}),
        ...(azure.entra_token !== undefined ? { entraToken: azure.entra_token } : {}),
        ...(azure.entra !== undefined
          ? {
              entra: {
                tenantId: azure.entra.tenant_id,
                clientId: azure.entra.client_id,
                clientSecret: azure.entra.client_secret,
                ...(azure.entra.authority !== undefined ? { authority: azure.entra.authority } : {}),
              },
            }
          : {}),
      },
    };
  }
  if (vertex) {
    return {
      vertex: {
        project: vertex.project,
        location: vertex.location,
        ...(vertex.credentials_file !== undefined ? { credentialsFile: resolve(configDirectory, vertex.credentials_file) } : {}),
        ...(vertex.access_token !== undefined ? { accessToken: vertex.access_token } : {}),
      },
    };
  }
  if (bedrock) return { bedrock: { region: bedrock.region, ...(bedrock.profile !== undefined ? { profile: bedrock.profile } : {}) } };
  return {};
}

/** Built-in templates, then the file, then the inline keys (per provider likewise). */
function toPromptTemplateSet(document: ConfigDocument, context: ConfigSource, problems: string[]): PromptTemplateSet | undefined {
  const section = document.prompts ?? {};
  const set: PromptTemplateSet = { ...DEFAULT_PROMPT_TEMPLATES, providers: {} };
  if (section.file !== undefined) {
    const base = context.filePath ? dirname(context.filePath) : context.cwd;
    try {
      const loaded = loadPromptTemplatesFile(resolve(base, section.file), section.file);
      Object.assign(set, loaded.shared);
      set.providers = loaded.providers;
    } catch (error) {
      if (!(error instanceof PromptTemplatesFileError)) throw error;
      problems.push(`prompts.file: ${error.message}`);
      return undefined;
    }
  }
  Object.assign(set, templatesOf(section));
  for (const [name, templates] of Object.entries(section.providers ?? {})) {
    set.providers[name] = { ...set.providers[name], ...templatesOf(templates) };
  }
  return set;
}

function templatesOf(section: PromptTemplatesSection): Partial<PromptTemplates> {
  return {
    ...(section.system_prompt !== undefined ? { systemPrompt: section.system_prompt } : {}),
    ...(section.with_context !== undefined ? { withContext: section.with_context } : {}),
    ...(section.without_context !== undefined ? { withoutContext: section.without_context } : {}),
  };
}
