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
  // Base64 float32 is about a fifth of the JSON size of float lists.
  embeddingEncoding: 'base64',
  streamUsageOption: true,
  listsEmbeddingModels: true,
};

export class OpenAiProvider extends OpenAiCompatibleChatProvider {
  constructor(settings: ProviderSettings) {
    super(settings, OPENAI_DIALECT);
  }
}
