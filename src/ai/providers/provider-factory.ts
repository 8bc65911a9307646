/**
 * The one registration point for provider kinds: a new kind is one adapter file plus one case here. The kinds
 * that download image URLs (Ollama, Gemini, Vertex, Bedrock) share the process's image downloader.
 */
import { TollgateError } from '../errors';
import type { AiProvider, ProviderSettings } from './ai-provider.interface';
import type { ImageInliner } from './image-downloads';
import { AnthropicProvider } from './anthropic/anthropic.provider';
import { AzureOpenAiProvider } from './azure-openai/azure-openai.provider';
import { BedrockProvider } from './bedrock/bedrock.provider';
import { DeepSeekProvider } from './deepseek/deepseek.provider';
import { GeminiProvider } from './gemini/gemini.provider';
import { HuggingFaceProvider } from './huggingface/huggingface.provider';
import { MistralProvider } from './mistral/mistral.provider';
import { OllamaProvider } from './ollama/ollama.provider';
import { OpenAiCompatibleProvider } from './openai-compatible/openai-compatible.provider';
import { OpenAiProvider } from './openai/openai.provider';
import { VertexProvider } from './vertex/vertex.provider';
import { XaiProvider } from './xai/xai.provider';

export function createProvider(settings: ProviderSettings, images?: ImageInliner): AiProvider {
  switch (settings.kind) {
    case 'ollama':
      return new OllamaProvider(settings, images);
    case 'anthropic':
      return new AnthropicProvider(settings);
    case 'gemini':
      return new GeminiProvider(settings, images);
    case 'openai':
      return new OpenAiProvider(settings);
    case 'mistral':
      return new MistralProvider(settings);
    case 'deepseek':
      return new DeepSeekProvider(settings);
    case 'xai':
      return new XaiProvider(settings);
    case 'huggingface':
      return new HuggingFaceProvider(settings);
    case 'openai_compatible':
      return new OpenAiCompatibleProvider(settings);
    case 'azure_openai':
      return new AzureOpenAiProvider(settings);
    case 'vertex':
      return new VertexProvider(settings, images);
    case 'bedrock':
      return new BedrockProvider(settings, images);
    default:
      throw new TollgateError(`${settings.name}: provider kind '${settings.kind}' is not available`);
  }
}
