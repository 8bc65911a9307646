/** DeepSeek (api.deepseek.com): OpenAI-style chat only; it has no embeddings endpoint. */
import type { ProviderSettings } from '../ai-provider.interface';
import { OpenAiCompatibleChatProvider, OpenAiDialect } from '../openai-chat/openai-compatible-chat';

export const DEEPSEEK_DIALECT: OpenAiDialect = {
  kind: 'deepseek',
  defaultUrl: 'https://api.deepseek.com',
  defaultChatModel: 'deepseek-chat',
  embeddings: false,
  maxTokensKey: 'max_tokens',
  seedKey: 'seed',
  streamUsageOption: true,
  listsEmbeddingModels: false,
  tools: true,
  // DeepSeek documents json_object only; a json_schema request is refused rather than loosened.
  structuredOutput: true,
  jsonSchema: false,
  vision: () => false,
};

export class DeepSeekProvider extends OpenAiCompatibleChatProvider {
  constructor(settings: ProviderSettings) {
    super(settings, DEEPSEEK_DIALECT);
  }
}
