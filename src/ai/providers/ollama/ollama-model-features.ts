/**
 * Which Ollama models take images: tools and structured output work on every model the server runs (it
 * refuses tools itself for a template without them), vision only on the vision families below.
 */
import type { ModelFeature } from '../ai-provider.interface';

/** Model name prefixes (before the `:tag`) of Ollama's vision families. */
export const OLLAMA_VISION_FAMILIES = [
  'llava',
  'bakllava',
  'llama3.2-vision',
  'llama4',
  'gemma3',
  'qwen2.5vl',
  'qwen2.5-vl',
  'minicpm-v',
  'moondream',
  'granite3.2-vision',
  'mistral-small3.1',
] as const;

export function ollamaModelSupports(feature: ModelFeature, model: string): boolean {
  if (feature !== 'vision') return true;
  const name = model.toLowerCase().split(':')[0].split('/').pop() ?? '';
  return OLLAMA_VISION_FAMILIES.some((family) => name.startsWith(family));
}
