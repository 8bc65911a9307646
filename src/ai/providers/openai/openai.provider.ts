/** OpenAI (api.openai.com): the reference dialect of the chat-completions wire format. */
import type { ProviderSettings } from '../ai-provider.interface';
import { OpenAiCompatibleChatProvider, OpenAiDialect } from '../openai-chat/openai-compatible-chat';

export const OPENAI_DIALECT: OpenAiDialect = {
  kind: 'openai',
  defaultUrl: 'https://api.openai.com/v1',
  defaultChatModel: 'gpt-4o-mini',
  defaultEmbeddingModel: 'text-embedding-3-small',
  embeddings: true,
  // Reasoning models refuse max_tokens; every current chat model takes max_completion_tokens.
  maxTokensKey: 'max_completion_tokens',
  seedKey: 'seed',
  // Base64 float32 is about a fifth of the JSON size of float lists.
  embeddingEncoding: 'base64',
  streamUsageOption: true,
  listsEmbeddingModels: true,
  tools: true,
  structuredOutput: true,
  jsonSchema: true,
  // Every current chat family reads images; gpt-3.5 and the o1-mini / o3-mini reasoning models do not.
  vision: (model) => !/^(gpt-3\.5|o1-mini|o3-mini)/.test(model),
};

export class OpenAiProvider extends OpenAiCompatibleChatProvider {
  constructor(settings: ProviderSettings) {
    super(settings, OPENAI_DIALECT);
  }
}
