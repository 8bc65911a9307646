/** Mistral (api.mistral.ai): OpenAI-style, but unknown body keys are refused with 422. */
import type { ProviderSettings } from '../ai-provider.interface';
import { OpenAiCompatibleChatProvider, OpenAiDialect } from '../openai-chat/openai-compatible-chat';

export const MISTRAL_DIALECT: OpenAiDialect = {
  kind: 'mistral',
  defaultUrl: 'https://api.mistral.ai/v1',
  defaultChatModel: 'mistral-small-latest',
  defaultEmbeddingModel: 'mistral-embed',
  embeddings: true,
  maxTokensKey: 'max_tokens',
  seedKey: 'random_seed',
  // Float is Mistral's default encoding, so the key is left out.
  embeddingEncoding: undefined,
  streamUsageOption: false,
  listsEmbeddingModels: true,
  tools: true,
  structuredOutput: true,
  jsonSchema: true,
  // Image input: pixtral and the Medium / Small families from 3.1 on (mistral-medium-*, mistral-small-*).
  vision: (model) => /pixtral|^mistral-(medium|small)/.test(model),
};

export class MistralProvider extends OpenAiCompatibleChatProvider {
  constructor(settings: ProviderSettings) {
    super(settings, MISTRAL_DIALECT);
  }
}
