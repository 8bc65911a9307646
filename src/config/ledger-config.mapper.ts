import { readPackagedFile } from '../common/packaged-files';
import { LEDGER_DEFAULTS, LEDGER_ENTRY_BYTES, type LedgerSettings } from '../governance/ledger/ledger-settings';
import { buildPricingTable, type PriceSection } from '../governance/ledger/pricing';
import { ConfigError } from './config.error';
import type { ConfigDocument } from './config.types';

/** The packaged price table's path inside the package (shipped through package.json "files"). */
export const DEFAULT_PRICING_FILE = 'config/pricing.default.json';

let packagedPrices: Record<string, PriceSection> | undefined;

function defaultPrices(): Record<string, PriceSection> {
  packagedPrices ??= (JSON.parse(readPackagedFile(DEFAULT_PRICING_FILE)) as { models: Record<string, PriceSection> }).models;
  return packagedPrices;
}

/** `governance.ledger` and `governance.pricing`; the ledger is on, in memory, unless configured otherwise. */
export function toLedgerSettings(document: ConfigDocument, source: string): LedgerSettings {
  const ledger = document.governance?.ledger ?? {};
  const pricing = document.governance?.pricing ?? {};
  const storeKind = ledger.store ?? 'memory';
  const problems: string[] = [];
  if (storeKind === 'postgres' && ledger.url === undefined) problems.push('governance.ledger.url: is required for store postgres');
  if (storeKind === 'memory') {
    for (const key of ['url', 'table', 'retention_days'] as const) {
      if (ledger[key] !== undefined) problems.push(`governance.ledger.${key}: applies to store postgres only`);
    }
  }
  for (const key of ['max_entries', 'max_bytes'] as const) {
    if (storeKind === 'postgres' && ledger[key] !== undefined) problems.push(`governance.ledger.${key}: applies to store memory only`);
  }
  if (ledger.max_entries !== undefined && ledger.max_bytes !== undefined) problems.push('governance.ledger.max_bytes: give max_entries or max_bytes, not both');
  if (problems.length) throw new ConfigError(problems.map((problem) => `${source}: ${problem}`));
  return {
    enabled: ledger.enabled ?? true,
    store:
      storeKind === 'postgres'
        ? { kind: 'postgres', url: ledger.url!, table: ledger.table ?? LEDGER_DEFAULTS.table, retentionDays: ledger.retention_days ?? LEDGER_DEFAULTS.retentionDays }
        : { kind: 'memory', maxEntries: ledger.max_entries ?? Math.floor((ledger.max_bytes ?? LEDGER_DEFAULTS.maxBytes) / LEDGER_ENTRY_BYTES) },
    batchSize: ledger.batch_size ?? LEDGER_DEFAULTS.batchSize,
    flushIntervalMs: ledger.flush_interval === undefined ? LEDGER_DEFAULTS.flushIntervalMs : Math.max(1, Math.round(ledger.flush_interval * 1000)),
    pricing: buildPricingTable(pricing.use_defaults === false ? {} : defaultPrices(), pricing.models ?? {}, pricing.use_defaults ?? true),
    allowUnpriced: pricing.allow_unpriced ?? false,
    metricsMaxTenants: ledger.metrics_max_tenants ?? LEDGER_DEFAULTS.metricsMaxTenants,
  };
}
