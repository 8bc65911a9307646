/**
 * Any server speaking the OpenAI chat-completions format (vLLM, LM Studio, llama.cpp server, OpenRouter,
 * Groq): the url is required and the key optional. Embeddings are attempted where the server has them.
 */
import type { ProviderSettings } from '../ai-provider.interface';
import { OpenAiCompatibleChatProvider, OpenAiDialect } from '../openai-chat/openai-compatible-chat';

export const OPENAI_COMPATIBLE_DIALECT: OpenAiDialect = {
  kind: 'openai_compatible',
  embeddings: true,
  // The widely implemented spelling; llama.cpp and older vLLM ignore max_completion_tokens.
  maxTokensKey: 'max_tokens',
  seedKey: 'seed',
  // Not every server decodes base64; float lists are what they all return.
  embeddingEncoding: 'float',
  streamUsageOption: true,
  listsEmbeddingModels: false,
  // Assumed: the server behind it (vLLM, LM Studio, llama.cpp, OpenRouter, Groq) takes tools, response_format
  // and image parts for the model chosen; the server's own 400 answers a model that does not.
  tools: true,
  structuredOutput: true,
  jsonSchema: true,
  vision: () => true,
};

export class OpenAiCompatibleProvider extends OpenAiCompatibleChatProvider {
  constructor(settings: ProviderSettings) {
    super(settings, OPENAI_COMPATIBLE_DIALECT);
  }
}
