/**
 * Azure OpenAI: the OpenAI chat-completions wire format on an Azure resource (`https://<resource>.openai.azure.com`).
 * Two APIs, chosen by `azure.apiVersion`: without it the v1 API (`/openai/v1/chat/completions`, the deployment
 * named in the body's `model`); with it the deployment-style API (`/openai/deployments/<deployment>/chat/completions
 * ?api-version=<v>`). Models map to deployments through `azure.deployments` (a model without an entry is its own
 * deployment name). The key travels in `api-key`, or an Entra token as `Authorization: Bearer`: a fixed one, or one
 * fetched for an app registration and refreshed before it expires (entra-credentials.ts). A prompt refused by
 * the content filter is a ContentFilterError (400) naming the categories that fired (azure-content-filter.ts). On the
 * v1 API a Responses request goes to `/openai/v1/responses` as written, as to OpenAI (docs/decisions.md B19).
 */
import { TollgateError } from '../../errors';
import type { AzureOpenAiSettings, HealthResult, ProviderSettings } from '../ai-provider.interface';
import { type CallCredentials, OpenAiCompatibleChatProvider, type OpenAiDialect, type Operation, type OperationRoute } from '../openai-chat/openai-compatible-chat';
import { OPENAI_DIALECT } from '../openai/openai.provider';
import { checkHealth } from '../provider-support';
import { modelNotAvailable } from '../../../upstream/upstream-errors';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';
import { contentFilterError } from './azure-content-filter';
import { EntraCredentials } from './entra-credentials';
import { isObject } from '../../../common/json-values';

export const AZURE_OPENAI_DIALECT: OpenAiDialect = {
  ...OPENAI_DIALECT,
  kind: 'azure_openai',
  // The resource is the customer's own; deployments are named by them too.
  defaultUrl: undefined,
  defaultChatModel: undefined,
  defaultEmbeddingModel: undefined,
  // The resource's model list names base models, not deployments, so it cannot prove a deployment exists.
  listsEmbeddingModels: false,
  authHeaders: azureAuthHeaders,
  refineError: refineAzureError,
};

export class AzureOpenAiProvider extends OpenAiCompatibleChatProvider {
  private readonly azure: AzureOpenAiSettings;
  private readonly entra?: EntraCredentials;

  constructor(settings: ProviderSettings) {
    super(settings, AZURE_OPENAI_DIALECT);
    this.azure = settings.azure ?? {};
    if (this.azure.entra) this.entra = new EntraCredentials(settings.name, this.azure.entra, settings.timeoutMs);
  }

  override describe(): Record<string, unknown> {
    const { apiVersion, deployments } = this.azure;
    return {
      ...super.describe(),
      api: apiVersion === undefined ? 'v1' : 'deployments',
      ...(apiVersion !== undefined ? { apiVersion } : {}),
      ...(deployments ? { deployments: { ...deployments } } : {}),
      auth: this.entra ? 'entra-client-credentials' : this.azure.entraToken !== undefined ? 'entra' : 'api-key',
    };
  }

  protected override callCredentials(): CallCredentials | undefined {
    return this.entra;
  }

  /** Ready when the resource answers its model list with these credentials; deployments are not listed there. */
  override healthCheck(): Promise<HealthResult> {
    return checkHealth(this, []);
  }

  /** `<resource>/openai`, whether the url was given as the resource, or with `/openai` or `/openai/v1`. */
  protected override chatBaseUrl(url: string): string {
    return `${url.replace(/\/+$/, '').replace(/\/openai(\/v1)?$/, '')}/openai`;
  }

  /** The v1 API serves `/openai/v1/responses`; the deployment-style API's preview route is left to the domain path. */
  protected override takesResponses(): boolean {
    return this.azure.apiVersion === undefined && super.takesResponses();
  }

  protected override route(operation: Operation, model?: string): OperationRoute {
    const apiVersion = this.azure.apiVersion;
    const tail = operation === 'chat' ? '/chat/completions' : `/${operation}`;
    if (apiVersion === undefined) return { path: `/v1${tail}` };
    const query = { 'api-version': apiVersion };
    if (operation === 'models' || model === undefined) return { path: tail, query };
    return { path: `/deployments/${encodeURIComponent(this.upstreamModel(model))}${tail}`, query };
  }

  protected override upstreamModel(model: string): string {
    return this.azure.deployments?.[model] ?? model;
  }
}

/** The fixed credential headers; none with `azure.entra`, whose token is fetched per call. */
function azureAuthHeaders(settings: ProviderSettings): Record<string, string> | undefined {
  if (settings.azure?.entra) return undefined;
  const token = settings.azure?.entraToken;
  if (token !== undefined) return { authorization: `Bearer ${token}` };
  if (settings.apiKey !== undefined) return { 'api-key': settings.apiKey };
  throw new TollgateError(`${settings.name}: an api_key, azure.entra_token or azure.entra is required for azure_openai`);
}

/** The content filter first; a missing deployment is Azure's `DeploymentNotFound` (404). */
export function refineAzureError(response: UpstreamErrorResponse): TollgateError | undefined {
  const filtered = contentFilterError(response);
  if (filtered) return filtered;
  const body = response.body;
  const code = isObject(body) && isObject(body.error) ? body.error.code : undefined;
  if (code === 'DeploymentNotFound') return modelNotAvailable(response.provider, response.model, response.status);
  return undefined;
}
