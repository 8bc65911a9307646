/**
 * Prompt templates: a system prompt, a template used when context items are given and one used without,
 * each overridable per provider. `{prompt}` and `{context}` are the placeholders, substituted in one pass
 * so text inside the prompt or the context is never expanded again.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { isObject } from '../../common/json-values';
import type { ChatMessage } from '../providers/ai-provider.interface';

export interface PromptTemplates {
  systemPrompt: string;
  withContext: string;
  withoutContext: string;
}

export interface PromptTemplateSet extends PromptTemplates {
  /** Per-provider overrides by registration name; missing fields fall back to the shared ones. */
  providers: Record<string, Partial<PromptTemplates>>;
}

export const DEFAULT_PROMPT_TEMPLATES: Readonly<PromptTemplates> = Object.freeze({
  systemPrompt: 'You are a helpful assistant. Answer accurately and concisely.',
  withContext:
    'Answer the question using the context below. If the context does not contain the answer, say so.\n\n' +
    'Context:\n{context}\n\nQuestion: {prompt}',
  withoutContext: '{prompt}',
});

/** The capture group makes split() keep the placeholder names: [text, name, text, name, ..., text]. */
const PLACEHOLDER = /\{(prompt|context)\}/;

/**
 * Templates split once and reused: every generation fills one, and there are only as many as the
 * configuration names (the bound is a guard, not an expected size).
 */
const splitTemplates = new Map<string, string[]>();
const MAX_SPLIT_TEMPLATES = 256;

export function fillTemplate(template: string, values: { prompt: string; context: string }): string {
  let parts = splitTemplates.get(template);
  if (!parts) {
    parts = template.split(PLACEHOLDER);
    if (splitTemplates.size < MAX_SPLIT_TEMPLATES) splitTemplates.set(template, parts);
  }
  let text = parts[0];
  for (let i = 1; i < parts.length; i += 2) text += values[parts[i] as 'prompt' | 'context'] + parts[i + 1];
  return text;
}

export function templatesFor(set: PromptTemplateSet, provider: string): PromptTemplates {
  const own = set.providers[provider] ?? {};
  return {
    systemPrompt: own.systemPrompt ?? set.systemPrompt,
    withContext: own.withContext ?? set.withContext,
    withoutContext: own.withoutContext ?? set.withoutContext,
  };
}

/** The chat messages for one provider: the system prompt (unless empty) and the filled user template. */
export function buildMessages(templates: PromptTemplates, prompt: string, renderedContext: string): ChatMessage[] {
  const template = renderedContext === '' ? templates.withoutContext : templates.withContext;
  const messages: ChatMessage[] = [];
  if (templates.systemPrompt.trim() !== '') messages.push({ role: 'system', content: templates.systemPrompt });
  messages.push({ role: 'user', content: fillTemplate(template, { prompt, context: renderedContext }) });
  return messages;
}

/** The keys of a templates file (YAML or JSON), snake_case like the configuration. */
const FILE_KEYS: Record<string, keyof PromptTemplates> = {
  system_prompt: 'systemPrompt',
  with_context: 'withContext',
  without_context: 'withoutContext',
};

export class PromptTemplatesFileError extends Error {
  override readonly name = 'PromptTemplatesFileError';
}

/**
 * Reads a templates file: top-level `system_prompt`, `with_context`, `without_context` (YAML block scalars
 * make multiline templates easy) and an optional `providers: {<name>: {...same keys}}`.
 */
export function loadPromptTemplatesFile(path: string, label: string = path): { shared: Partial<PromptTemplates>; providers: Record<string, Partial<PromptTemplates>> } {
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PromptTemplatesFileError(`${label}: ${code ? `cannot read the file (${code})` : 'is not valid YAML or JSON'}`);
  }
  if (!isObject(raw)) throw new PromptTemplatesFileError(`${label}: must be a mapping of template names to text`);
  const { providers, ...shared } = raw;
  const result = { shared: readTemplates(shared, label, ''), providers: {} as Record<string, Partial<PromptTemplates>> };
  if (providers !== undefined) {
    if (!isObject(providers)) throw new PromptTemplatesFileError(`${label}: providers must be a mapping of provider names`);
    for (const [name, templates] of Object.entries(providers)) {
      if (!isObject(templates)) throw new PromptTemplatesFileError(`${label}: providers.${name} must be a mapping`);
      result.providers[name] = readTemplates(templates, label, `providers.${name}.`);
    }
  }
  return result;
}

function readTemplates(section: Record<string, unknown>, label: string, prefix: string): Partial<PromptTemplates> {
  const out: Partial<PromptTemplates> = {};
  for (const [key, value] of Object.entries(section)) {
    const target = FILE_KEYS[key];
    if (!target) {
      throw new PromptTemplatesFileError(`${label}: ${prefix}${key}: unknown key (known keys: ${Object.keys(FILE_KEYS).join(', ')})`);
    }
    if (typeof value !== 'string') throw new PromptTemplatesFileError(`${label}: ${prefix}${key}: must be a string`);
    out[target] = value;
  }
  return out;
}
