import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseModelName, buildPricingTable, costMicros, findPrice, PriceLookup, type PriceSection, toModelPrice } from './pricing';

const defaults: Record<string, PriceSection> = {
  'openai/gpt-4o': { input: 2.5, output: 10, cached_input: 1.25 },
  'openai/gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 },
  'anthropic/claude-sonnet-4-5': { input: 3, output: 15, cached_input: 0.3 },
  'mistral/mistral-large-2411': { input: 2, output: 6 },
};

describe('findPrice', () => {
  const table = buildPricingTable(defaults, { 'eu-openai/gpt-4o': { input: 3, output: 12 }, 'ollama/llama3*': { input: 0, output: 0 }, 'ollama/llama3.1*': { input: 1, output: 1 } }, true);

  it('prefers the registration name, then the kind', () => {
    expect(findPrice(table, 'eu-openai', 'openai', 'gpt-4o')).toEqual({ input: 3, output: 12 });
    expect(findPrice(table, 'us-openai', 'openai', 'gpt-4o')).toEqual({ input: 2.5, output: 10, cachedInput: 1.25 });
  });

  it('matches an exact name before its dated snapshot, and a snapshot through its base name', () => {
    expect(findPrice(table, 'openai', 'openai', 'gpt-4o-mini-2024-07-18')?.input).toBe(0.15);
    expect(findPrice(table, 'openai', 'openai', 'gpt-4o-2024-08-06')?.input).toBe(2.5);
    expect(findPrice(table, 'anthropic', 'anthropic', 'claude-sonnet-4-5-20250929')?.output).toBe(15);
    expect(findPrice(table, 'openai', 'openai', 'GPT-4o')?.input).toBe(2.5);
  });

  it('does not take a longer model for a shorter one (gpt-4o-mini is not gpt-4o)', () => {
    const only4o = buildPricingTable({ 'openai/gpt-4o': { input: 2.5, output: 10 } }, {}, true);
    expect(findPrice(only4o, 'openai', 'openai', 'gpt-4o-mini')).toBeUndefined();
  });

  it('uses the longest matching prefix entry', () => {
    expect(findPrice(table, 'ollama', 'ollama', 'llama3.1:8b')?.input).toBe(1);
    expect(findPrice(table, 'ollama', 'ollama', 'llama3:70b')?.input).toBe(0);
  });

  it('answers undefined for an unknown model, and for every model when defaults are off', () => {
    expect(findPrice(table, 'openai', 'openai', 'gpt-unknown')).toBeUndefined();
    expect(findPrice(buildPricingTable(defaults, {}, false), 'openai', 'openai', 'gpt-4o')).toBeUndefined();
  });

  it('strips the models/ path Gemini puts before a name', () => {
    expect(baseModelName('models/gemini-2.5-flash')).toBe('gemini-2.5-flash');
  });
});

describe('costMicros', () => {
  it('prices cached input at the cached rate and the rest at the input rate, in micro-dollars', () => {
    // 1000 uncached × 2.5 + 1000 cached × 1.25 + 500 output × 10 = 2500 + 1250 + 5000
    expect(costMicros({ input: 2.5, output: 10, cachedInput: 1.25 }, { inputTokens: 2000, cachedTokens: 1000, outputTokens: 500 })).toBe(8750);
  });

  it('charges cached tokens at the input rate when the model has no cached price', () => {
    expect(costMicros({ input: 2, output: 6 }, { inputTokens: 100, cachedTokens: 40, outputTokens: 10 })).toBe(260);
  });

  it('prices cache writes at their tier: 5-minute writes at cache_write, 1-hour writes at cache_write_1h, each token once', () => {
    const sonnet = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };
    // 10000 input = 2000 uncached + 5000 read + 3000 written (1000 of them for an hour); 100 output.
    // 2000 × 3 + 5000 × 0.3 + 2000 × 3.75 + 1000 × 6 + 100 × 15 = 6000 + 1500 + 7500 + 6000 + 1500
    expect(costMicros(sonnet, { inputTokens: 10_000, cachedTokens: 5000, cacheWriteTokens: 3000, cacheWrite1hTokens: 1000, outputTokens: 100 })).toBe(22_500);
  });

  it('charges cache writes at the input rate without a cache_write price, and 1-hour writes at cache_write without their own', () => {
    expect(costMicros({ input: 2, output: 6 }, { inputTokens: 100, cachedTokens: 0, cacheWriteTokens: 60, outputTokens: 0 })).toBe(200);
    expect(costMicros({ input: 2, output: 6, cacheWrite: 2.5 }, { inputTokens: 100, cachedTokens: 0, cacheWriteTokens: 60, cacheWrite1hTokens: 60, outputTokens: 0 })).toBe(230);
  });

  it('prices web searches per thousand when the entry has a web_search price, and leaves them out otherwise', () => {
    // 100 × 3 + 10 × 15 + 2 searches × $10 / 1000 = 300 + 150 + 20000 micro-dollars
    expect(costMicros(toModelPrice({ input: 3, output: 15, web_search: 10 }), { inputTokens: 100, cachedTokens: 0, outputTokens: 10, webSearchRequests: 2 })).toBe(20_450);
    expect(costMicros({ input: 3, output: 15 }, { inputTokens: 100, cachedTokens: 0, outputTokens: 10, webSearchRequests: 2 })).toBe(450);
  });

  it('never counts more written or read tokens than the input holds', () => {
    // A report claiming 80 reads and 80 writes of 100 input tokens: 80 read, the remaining 20 written, none uncached.
    expect(costMicros({ input: 1, output: 0, cachedInput: 0.1, cacheWrite: 2 }, { inputTokens: 100, cachedTokens: 80, cacheWriteTokens: 80, outputTokens: 0 })).toBe(48);
  });

  it('rounds to whole micro-dollars once', () => {
    expect(costMicros({ input: 0.15, output: 0.6 }, { inputTokens: 3, cachedTokens: 0, outputTokens: 1 })).toBe(1);
  });

  it('is null without a price', () => {
    expect(costMicros(undefined, { inputTokens: 10, cachedTokens: 0, outputTokens: 10 })).toBeNull();
  });
});

describe('PriceLookup', () => {
  it('answers what findPrice answers, keyed by registration, kind and model, and remembers absences too', () => {
    const table = buildPricingTable({}, { 'openai/gpt-4o*': { input: 2.5, output: 10 }, 'work/gpt-4o': { input: 1, output: 1 } }, false);
    const reads = jest.spyOn(table.entries as Map<string, unknown>, 'get');
    const lookup = new PriceLookup(table);
    const asked: [string, string, string][] = [['work', 'openai', 'gpt-4o'], ['openai', 'openai', 'gpt-4o-mini'], ['work', 'openai', 'gpt-4o-mini'], ['openai', 'openai', 'o3']];
    for (const [provider, kind, model] of asked) {
      const expected = findPrice(table, provider, kind, model);
      expect(lookup.priceOf(provider, kind, model)).toEqual(expected);
    }
    const readsBefore = reads.mock.calls.length;
    for (const [provider, kind, model] of asked) lookup.priceOf(provider, kind, model);
    expect(reads.mock.calls.length).toBe(readsBefore);
    expect(lookup.priceOf('work', 'openai', 'gpt-4o')).toEqual({ input: 1, output: 1 });
    expect(lookup.priceOf('openai', 'openai', 'o3')).toBeUndefined();
  });
});

describe('config/pricing.default.json', () => {
  const file = JSON.parse(readFileSync(join(__dirname, '../../../config/pricing.default.json'), 'utf8')) as {
    checked: string;
    models: Record<string, PriceSection>;
  };

  it('says when the prices were read, and prices only kinds with read sources (DeepSeek and Mistral are unpriced until configured)', () => {
    expect(file.checked).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const kinds = new Set(Object.keys(file.models).map((key) => key.split('/')[0]));
    expect([...kinds].sort()).toEqual(['anthropic', 'gemini', 'openai', 'xai']);
  });

  it('holds only non-negative prices and no moving -latest alias', () => {
    for (const [key, price] of Object.entries(file.models)) {
      expect(key).not.toMatch(/-latest$/);
      for (const value of [price.input, price.output, price.cached_input ?? 0, price.cache_write ?? 0, price.cache_write_1h ?? 0]) expect(value).toBeGreaterThanOrEqual(0);
    }
  });

  it("leaves the cloud kinds' models unpriced, not priced as their maker's kind", () => {
    const packaged = buildPricingTable(file.models, {}, true);
    expect(findPrice(packaged, 'anthropic', 'anthropic', 'claude-sonnet-4-5-20250929')).toBeDefined();
    expect(findPrice(packaged, 'bedrock', 'bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBeUndefined();
    expect(findPrice(packaged, 'vertex', 'vertex', 'claude-sonnet-4-5@20250929')).toBeUndefined();
    expect(findPrice(packaged, 'vertex', 'vertex', 'gemini-2.5-pro')).toBeUndefined();
    expect(findPrice(packaged, 'azure_openai', 'azure_openai', 'gpt-4o')).toBeUndefined();
  });

  it('prices a cloud registration from governance.pricing.models, the model named as the registration calls it', () => {
    const table = buildPricingTable(file.models, {
      'bedrock-us/us.anthropic.claude-sonnet-4-5-20250929-v1:0': { input: 3.3, output: 16.5 },
      'vertex-eu/claude-sonnet-4-5': { input: 3.3, output: 16.5, cached_input: 0.33 },
      'azure-eu/gpt-4o': { input: 2.75, output: 11 },
    }, true);
    const usage = { inputTokens: 1000, cachedTokens: 500, outputTokens: 100 };
    // 1000 × 3.3 + 100 × 16.5 (no cached price: reads at the input price); 500 × 3.3 + 500 × 0.33 + 100 × 16.5;
    // 1000 × 2.75 + 100 × 11; another Azure registration has no price.
    expect(costMicros(findPrice(table, 'bedrock-us', 'bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'), usage)).toBe(4950);
    expect(costMicros(findPrice(table, 'vertex-eu', 'vertex', 'claude-sonnet-4-5@20250929'), usage)).toBe(3465);
    expect(costMicros(findPrice(table, 'azure-eu', 'azure_openai', 'gpt-4o'), usage)).toBe(3850);
    expect(costMicros(findPrice(table, 'azure-us', 'azure_openai', 'gpt-4o'), usage)).toBeNull();
  });

  it('prices cache writes only for Anthropic, at its documented 1.25x (5-minute) and 2x (1-hour) of the input price', () => {
    for (const [key, price] of Object.entries(file.models)) {
      if (!key.startsWith('anthropic/')) {
        expect(price.cache_write).toBeUndefined();
        continue;
      }
      // The page rounds Claude 3 Haiku's 5-minute write (0.3125) to 0.30.
      expect(price.cache_write).toBeCloseTo(price.input * 1.25, 1);
      expect(price.cache_write_1h).toBeCloseTo(price.input * 2, 5);
    }
  });
});
