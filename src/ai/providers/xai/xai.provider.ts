/** xAI (api.x.ai): OpenAI-style chat only; a wrong key comes back as 400, not 401. */
import { AuthenticationError } from '../../errors';
import type { ProviderSettings } from '../ai-provider.interface';
import { OpenAiCompatibleChatProvider, OpenAiDialect } from '../openai-chat/openai-compatible-chat';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';

export const XAI_DIALECT: OpenAiDialect = {
  kind: 'xai',
  defaultUrl: 'https://api.x.ai/v1',
  defaultChatModel: 'grok-3-mini',
  embeddings: false,
  maxTokensKey: 'max_tokens',
  seedKey: 'seed',
  streamUsageOption: true,
  listsEmbeddingModels: false,
  tools: true,
  structuredOutput: true,
  jsonSchema: true,
  // Image input: the *-vision models and grok-4 (xAI's model list marks the image input modality).
  vision: (model) => /vision|^grok-4/.test(model),
  refineError: refineXaiError,
};

export class XaiProvider extends OpenAiCompatibleChatProvider {
  constructor(settings: ProviderSettings) {
    super(settings, XAI_DIALECT);
  }
}

/**
 * xAI answers a bad key with 400 and `{"code":"...invalid argument","error":"Incorrect API key provided..."}`
 * (or the same text inside an OpenAI-style error object). The text is only matched, never surfaced.
 */
export function refineXaiError(response: UpstreamErrorResponse): AuthenticationError | undefined {
  if (response.status !== 400) return undefined;
  const body = response.body as { error?: unknown } | undefined;
  const error = body?.error;
  const text = typeof error === 'string' ? error : (error as { message?: unknown } | undefined)?.message;
  if (typeof text === 'string' && /api key/i.test(text)) {
    return new AuthenticationError(`${response.provider}: upstream rejected the credentials (400)`, {
      provider: response.provider,
    });
  }
  return undefined;
}
