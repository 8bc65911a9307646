/**
 * The pricing table: USD per million tokens per `provider/model`, and the cost of one call in integer
 * micro-dollars. One USD per million tokens is exactly one micro-dollar per token, so a price is also the
 * micro-dollar cost of one token. An unknown model has cost `null`, never a guess (docs/governance.md).
 */

/**
 * USD per million tokens. `cachedInput` (cache reads) and `cacheWrite` (cache writes; Anthropic's 5-minute tier)
 * default to `input` (a provider without a cache discount or surcharge); `cacheWrite1h` (Anthropic's 1-hour
 * tier) defaults to `cacheWrite`.
 */
export interface ModelPrice {
  input: number;
  output: number;
  cachedInput?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  /** USD per thousand web searches (Anthropic's server tool); searches are not priced without it. */
  webSearch?: number;
}

/**
 * Token counts as the ledger keeps them. Cache reads and cache writes are parts of input tokens (as TokenUsage
 * reports them), and the 1-hour writes a part of the writes, so no token is priced twice.
 */
export interface PricedUsage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  cacheWriteTokens?: number;
  cacheWrite1hTokens?: number;
  /** Searches a server tool made (Anthropic's web search), priced per search, not per token. */
  webSearchRequests?: number;
}

export interface PricingTable {
  /** Keys `provider/model`, where provider is a registration name or a provider kind; a key ending in `*` is a prefix. */
  readonly entries: ReadonlyMap<string, ModelPrice>;
}

/** The packaged default's JSON shape (config/pricing.default.json) and governance.pricing.models in config. */
export interface PriceSection {
  input: number;
  output: number;
  cached_input?: number;
  cache_write?: number;
  cache_write_1h?: number;
  /** USD per thousand web searches. */
  web_search?: number;
}

export function toModelPrice(section: PriceSection): ModelPrice {
  return {
    input: section.input,
    output: section.output,
    ...(section.cached_input !== undefined ? { cachedInput: section.cached_input } : {}),
    ...(section.cache_write !== undefined ? { cacheWrite: section.cache_write } : {}),
    ...(section.cache_write_1h !== undefined ? { cacheWrite1h: section.cache_write_1h } : {}),
    ...(section.web_search !== undefined ? { webSearch: section.web_search } : {}),
  };
}

/** Configured entries replace packaged ones of the same key; `useDefaults: false` drops the packaged table. */
export function buildPricingTable(
  defaults: Readonly<Record<string, PriceSection>>,
  configured: Readonly<Record<string, PriceSection>>,
  useDefaults: boolean,
): PricingTable {
  const entries = new Map<string, ModelPrice>();
  if (useDefaults) for (const [key, price] of Object.entries(defaults)) entries.set(key.toLowerCase(), toModelPrice(price));
  for (const [key, price] of Object.entries(configured)) entries.set(key.toLowerCase(), toModelPrice(price));
  return { entries };
}

/** A dated snapshot suffix: `-2024-08-06`, `-20241022`, `@20240620`, `-001` style version numbers excluded. */
const SNAPSHOT_SUFFIX = /(?:[-@]\d{4}-\d{2}-\d{2}|[-@]\d{8})$/;

/** The model name without a `models/` path (Gemini) and without a dated snapshot suffix. */
export function baseModelName(model: string): string {
  return model.toLowerCase().replace(/^models\//, '').replace(SNAPSHOT_SUFFIX, '');
}

/**
 * The price of `model` called through the registration `provider` of kind `kind`. Order: the exact model
 * under the registration name, then under the kind; the same for the model without its dated snapshot
 * suffix; then the longest prefix entry (`openai/gpt-4o*`), registration name before kind.
 */
export function findPrice(table: PricingTable, provider: string, kind: string, model: string): ModelPrice | undefined {
  const named = findNamedPrice(table, provider, kind, model);
  if (named) return named.price;
  const exact = model.toLowerCase().replace(/^models\//, '');
  const owners = priceOwners(provider, kind);
  for (const owner of owners) {
    let best: { length: number; price: ModelPrice } | undefined;
    const key = `${owner}/${exact}`;
    for (const [entry, price] of table.entries) {
      if (!entry.endsWith('*')) continue;
      const prefix = entry.slice(0, -1);
      if (key.startsWith(prefix) && (!best || prefix.length > best.length)) best = { length: prefix.length, price };
    }
    if (best) return best.price;
  }
  return undefined;
}

/**
 * The price an entry of the table names `model` by (not a prefix entry): the exact model, else the model without
 * its dated snapshot suffix, each under the registration name, then the kind. `name` is the model as the table
 * writes it (lower case, no `models/`, no snapshot suffix when that is how it was found).
 */
export function findNamedPrice(table: PricingTable, provider: string, kind: string, model: string): { name: string; price: ModelPrice } | undefined {
  const exact = model.toLowerCase().replace(/^models\//, '');
  const base = baseModelName(model);
  const owners = priceOwners(provider, kind);
  for (const name of exact === base ? [exact] : [exact, base]) {
    for (const owner of owners) {
      const price = table.entries.get(`${owner}/${name}`);
      if (price) return { name, price };
    }
  }
  return undefined;
}

function priceOwners(provider: string, kind: string): string[] {
  return provider === kind ? [provider.toLowerCase()] : [provider.toLowerCase(), kind.toLowerCase()];
}

/** Prices looked up per provider and model, remembered up to this many (model names are caller-chosen). */
const REMEMBERED_PRICES = 1000;

/**
 * findPrice over one table, remembered per registration, kind and model: the ledger and the budget gate price
 * every call, and the prefix scan walks the whole table.
 */
export class PriceLookup {
  /** registration -> kind -> model -> price: nested, so a lookup builds no key string. */
  private readonly prices = new Map<string, Map<string, Map<string, ModelPrice | undefined>>>();
  private remembered = 0;

  constructor(private readonly table: PricingTable) {}

  priceOf(provider: string, kind: string, model: string): ModelPrice | undefined {
    let byKind = this.prices.get(provider);
    let byModel = byKind?.get(kind);
    if (byModel?.has(model)) return byModel.get(model);
    const price = findPrice(this.table, provider, kind, model);
    if (this.remembered >= REMEMBERED_PRICES) {
      this.prices.clear();
      this.remembered = 0;
      byKind = byModel = undefined;
    }
    if (!byKind) this.prices.set(provider, (byKind = new Map()));
    if (!byModel) byKind.set(kind, (byModel = new Map()));
    byModel.set(model, price);
    this.remembered += 1;
    return price;
  }
}

/** Integer micro-dollars, rounded once at the end; `null` without a price. */
export function costMicros(price: ModelPrice | undefined, usage: PricedUsage): number | null {
  if (!price) return null;
  const cached = Math.min(usage.cachedTokens, usage.inputTokens);
  const writes = Math.min(usage.cacheWriteTokens ?? 0, usage.inputTokens - cached);
  const writes1h = Math.min(usage.cacheWrite1hTokens ?? 0, writes);
  const writePrice = price.cacheWrite ?? price.input;
  const micros =
    (usage.inputTokens - cached - writes) * price.input +
    cached * (price.cachedInput ?? price.input) +
    (writes - writes1h) * writePrice +
    writes1h * (price.cacheWrite1h ?? writePrice) +
    usage.outputTokens * price.output +
    // USD per thousand searches is a thousand micro-dollars per search per USD.
    (usage.webSearchRequests ?? 0) * (price.webSearch ?? 0) * 1_000;
  return Math.round(micros);
}

/** Micro-dollars as a USD number for APIs and display (1 USD = 1_000_000). */
export function microsToUsd(micros: number): number {
  return micros / 1_000_000;
}
