/**
 * Each provider's usage report, from the recorded fixtures in test/fixtures/usage/, through the adapter's
 * mapping into the domain, out again in every surface's dialect, and into the ledger's cost. The cost is checked
 * against the provider's own billing rule applied to the raw report, so a token counted both as cached (or
 * written) and as plain input shows up as a wrong price: the double counting peers get wrong.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { measuredUsage } from '../../ai/client/model-call';
import { anthropicUsage } from '../../ai/http/anthropic/anthropic-responses';
import { geminiUsage } from '../../ai/http/gemini/gemini-answers';
import { openAiUsage } from '../../ai/http/openai/openai-responses';
import { responsesUsage } from '../../ai/http/responses/responses-bodies';
import type { TokenUsage } from '../../ai/providers/ai-provider.interface';
import { toTokenUsage } from '../../ai/providers/anthropic/anthropic-usage';
import { convertGeminiUsage } from '../../ai/providers/gemini/gemini-usage';
import { ollamaUsage } from '../../ai/providers/ollama/ollama-response';
import { parseUsage } from '../../ai/providers/openai-chat/convert-usage';
import { costMicros, type ModelPrice } from './pricing';

type Report = Record<string, unknown>;
interface Fixture {
  cases: Array<{ name: string; usage: Report; domain: TokenUsage }>;
}

const fixture = (provider: string): Fixture => JSON.parse(readFileSync(join(__dirname, '../../../test/fixtures/usage', `${provider}.json`), 'utf8')) as Fixture;
const count = (value: unknown): number => (typeof value === 'number' ? value : 0);
const detail = (value: unknown, key: string): number => count((value as Report | undefined)?.[key]);

const PRICE: ModelPrice = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };

/** Per provider: its adapter's mapping, and what the provider bills for a report (micro-dollars at PRICE, before rounding). */
const PROVIDERS: Record<string, { toDomain: (usage: Report) => TokenUsage | undefined; billed: (usage: Report) => number }> = {
  anthropic: {
    toDomain: toTokenUsage,
    // input_tokens excludes both cache reads and writes; writes are billed per tier.
    billed: (u) =>
      count(u.input_tokens) * PRICE.input +
      count(u.cache_read_input_tokens) * PRICE.cachedInput! +
      detail(u.cache_creation, 'ephemeral_5m_input_tokens') * PRICE.cacheWrite! +
      detail(u.cache_creation, 'ephemeral_1h_input_tokens') * PRICE.cacheWrite1h! +
      count(u.output_tokens) * PRICE.output,
  },
  openai: {
    toDomain: parseUsage,
    // cached_tokens are part of prompt_tokens; reasoning tokens part of completion_tokens.
    billed: (u) => {
      const cached = detail(u.prompt_tokens_details, 'cached_tokens');
      return (count(u.prompt_tokens) - cached) * PRICE.input + cached * PRICE.cachedInput! + count(u.completion_tokens) * PRICE.output;
    },
  },
  deepseek: {
    toDomain: parseUsage,
    // Hits and misses add up to prompt_tokens.
    billed: (u) => count(u.prompt_cache_miss_tokens) * PRICE.input + count(u.prompt_cache_hit_tokens) * PRICE.cachedInput! + count(u.completion_tokens) * PRICE.output,
  },
  gemini: {
    toDomain: convertGeminiUsage,
    // Cached content is part of the prompt; thoughts are output beside the candidates.
    billed: (u) =>
      (count(u.promptTokenCount) - count(u.cachedContentTokenCount)) * PRICE.input +
      count(u.cachedContentTokenCount) * PRICE.cachedInput! +
      (count(u.candidatesTokenCount) + count(u.thoughtsTokenCount)) * PRICE.output,
  },
  ollama: {
    toDomain: ollamaUsage,
    billed: (u) => count(u.prompt_eval_count) * PRICE.input + count(u.eval_count) * PRICE.output,
  },
};

describe.each(Object.keys(PROVIDERS))('%s usage, from recorded reports', (provider) => {
  const { toDomain, billed } = PROVIDERS[provider];

  it.each(fixture(provider).cases.map((each) => [each.name, each] as const))('%s', (_name, { usage, domain }) => {
    const mapped = toDomain(usage);
    expect(mapped).toEqual(domain);
    const input = domain.inputTokens ?? 0;
    const cached = domain.cachedInputTokens ?? 0;
    const written = domain.cacheWriteInputTokens ?? 0;

    // Every surface reports the same tokens in its own fields, none of them twice.
    const anthropic = anthropicUsage(mapped);
    expect(anthropic.input_tokens + anthropic.cache_read_input_tokens + anthropic.cache_creation_input_tokens).toBe(input);
    expect(anthropic.cache_creation.ephemeral_5m_input_tokens + anthropic.cache_creation.ephemeral_1h_input_tokens).toBe(written);
    const chat = openAiUsage(mapped)!;
    expect(chat.prompt_tokens).toBe(input);
    expect(chat.prompt_tokens_details?.cached_tokens ?? 0).toBe(cached);
    expect(chat.completion_tokens_details?.reasoning_tokens ?? 0).toBe(domain.reasoningTokens ?? 0);
    const responses = responsesUsage(mapped)!;
    expect(responses.input_tokens).toBe(input);
    expect(responses.input_tokens_details.cached_tokens).toBe(cached);
    expect(responses.output_tokens).toBe(domain.outputTokens);
    expect(responses.output_tokens_details.reasoning_tokens).toBe(domain.reasoningTokens ?? 0);
    const gemini = geminiUsage(mapped)!;
    expect(gemini.promptTokenCount).toBe(input);
    expect(gemini.candidatesTokenCount + (gemini.thoughtsTokenCount ?? 0)).toBe(domain.outputTokens);
    expect(gemini.cachedContentTokenCount ?? 0).toBe(cached);

    // The ledger prices what the provider bills.
    const { usage: recorded, estimated } = measuredUsage(mapped, 0, 0);
    expect(estimated).toBe(false);
    expect(costMicros(PRICE, recorded)).toBe(Math.round(billed(usage)));
  });
});
