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
  responsesApi: true,
  listsEmbeddingModels: true,
  tools: true,
  structuredOutput: true,
  jsonSchema: true,
  // Every current chat family reads images. Not: gpt-3.5, the original GPT-4 and the GPT-4 Turbo previews
  // (images came with gpt-4-vision-preview and gpt-4-turbo-2024-04-09), o1-mini, o1-preview and o3-mini.
  vision: (model) => !/^(gpt-3\.5|gpt-4(-0314|-0613|-32k.*|-1106-preview|-0125-preview|-turbo-preview)?$|o1-mini|o1-preview|o3-mini)/.test(model),
};

export class OpenAiProvider extends OpenAiCompatibleChatProvider {
  constructor(settings: ProviderSettings) {
    super(settings, OPENAI_DIALECT);
  }
}
