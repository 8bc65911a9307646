/**
 * `tollgate:ledger.entry`: one message per ledger entry, with metric labels already bounded
 * (docs/governance.md#ledger-and-usage), for the Prometheus counters and any other in-process subscriber.
 */
import diagnosticsChannel from 'node:diagnostics_channel';

export const LEDGER_ENTRY_CHANNEL = 'tollgate:ledger.entry';

export interface LedgerEntryEvent {
  /** The tenant, `none`, or `other` past the tenant label cap. */
  tenant: string;
  provider: string;
  /** The model when the configuration or the price table names it (model-labels.ts), else `other`. */
  model: string;
  status: string;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  /** Null when the model has no price. */
  costMicros: number | null;
}

export const ledgerEntryChannel = diagnosticsChannel.channel(LEDGER_ENTRY_CHANNEL);
