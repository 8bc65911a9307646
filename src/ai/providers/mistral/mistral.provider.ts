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
  // Image input: pixtral, Medium 3 on (not the retired mistral-medium-2312), Small 3.1 on (not the dated
  // 2402 / 2409 / 2501 releases), and Magistral 1.2 on (2509, and the -latest aliases).
  vision: (model) =>
    /pixtral|^mistral-medium(?!-2312)|^mistral-small(?!-(2402|2409|2501))|^magistral-(small|medium)-(latest|2509|251\d|2[6-9]\d\d)/.test(model),
};

export class MistralProvider extends OpenAiCompatibleChatProvider {
  constructor(settings: ProviderSettings) {
    super(settings, MISTRAL_DIALECT);
  }
}
