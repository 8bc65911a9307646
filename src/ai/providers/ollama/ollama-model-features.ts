/**
 * Which Ollama models take images: tools and structured output work on every model the server runs (it
 * refuses tools itself for a template without them), vision only on the vision families below. Checked
 * against Ollama's library (models tagged "vision"); the sources are cited in docs/wire-formats.md.
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
  'qwen3-vl',
  'minicpm-v',
  'moondream',
  'granite3.2-vision',
  'mistral-small3.1',
  'mistral-small3.2',
] as const;

/** Sizes of a vision family that are text-only: Gemma 3's 270M and 1B take no images (4B and up do). */
const TEXT_ONLY_TAGS: Readonly<Record<string, readonly string[]>> = { gemma3: ['270m', '1b'] };

export function ollamaModelSupports(feature: ModelFeature, model: string): boolean {
  if (feature !== 'vision') return true;
  const [path, tag = ''] = model.toLowerCase().split(':');
  const name = path.split('/').pop() ?? '';
  const family = OLLAMA_VISION_FAMILIES.find((prefix) => name.startsWith(prefix) && !/[a-z]/.test(name.charAt(prefix.length)));
  if (family === undefined) return false;
  return !(TEXT_ONLY_TAGS[family] ?? []).some((size) => tag === size || tag.startsWith(`${size}-`));
}
