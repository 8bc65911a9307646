/**
 * Hugging Face Inference Providers: chat through the OpenAI-compatible router (`<router>/v1`), embeddings
 * through the hf-inference feature-extraction pipeline (`<router>/hf-inference/models/<model>/pipeline/
 * feature-extraction`), which takes a list of texts in `inputs` and returns one vector per text.
 */
import type { EmbedRequest, EmbedResult, ProviderSettings } from '../ai-provider.interface';
import { OpenAiCompatibleChatProvider, OpenAiDialect } from '../openai-chat/openai-compatible-chat';
import { UpstreamClient } from '../../../upstream/upstream-client';
import { validateEmbeddings } from '../provider-support';

export const HUGGINGFACE_DIALECT: OpenAiDialect = {
  kind: 'huggingface',
  defaultUrl: 'https://router.huggingface.co/v1',
  defaultChatModel: 'meta-llama/Llama-3.1-8B-Instruct',
  defaultEmbeddingModel: 'sentence-transformers/all-MiniLM-L6-v2',
  embeddings: true,
  maxTokensKey: 'max_tokens',
  seedKey: 'seed',
  // The router's /v1/models lists chat models only.
  streamUsageOption: true,
  listsEmbeddingModels: false,
  // The router's chat route takes tools and response_format json_schema; image input is not relied on.
  tools: true,
  structuredOutput: true,
  jsonSchema: true,
  vision: () => false,
};

export class HuggingFaceProvider extends OpenAiCompatibleChatProvider {
  private readonly pipelineHttp: UpstreamClient;

  constructor(settings: ProviderSettings) {
    super(settings, HUGGINGFACE_DIALECT);
    this.pipelineHttp = new UpstreamClient({
      provider: settings.name,
      baseUrl: routerRoot(this.settings.url),
      timeoutMs: settings.timeoutMs,
      headers: settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : undefined,
    });
  }

  override async embed(request: EmbedRequest): Promise<EmbedResult> {
    const model = this.embeddingModel(request);
    const path = `/hf-inference/models/${model.split('/').map(encodeURIComponent).join('/')}/pipeline/feature-extraction`;
    const response = await this.pipelineHttp.postJson(path, { inputs: request.inputs }, { signal: request.signal, onSent: request.onSent, model });
    if (!Array.isArray(response.body)) throw this.invalid('feature-extraction response is not a list');
    return {
      embeddings: validateEmbeddings(response.body, request.inputs.length, this.settings.embeddingDimensions, this.name),
      model,
    };
  }

  /** Accepts the router url with or without `/v1`. */
  protected override chatBaseUrl(url: string): string {
    return `${routerRoot(url)}/v1`;
  }

  override async close(): Promise<void> {
    await Promise.all([super.close(), this.pipelineHttp.close()]);
  }
}

/** The router root, whether the url was given with or without its `/v1` suffix. */
function routerRoot(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '');
}
