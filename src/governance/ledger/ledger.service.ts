/**
 * The ledger: turns each model-call record into an entry (identity from the call context, cost from the
 * pricing table), queues it for the store, publishes it for the metrics, and answers usage reports.
 * Entries are flushed before the application's shutdown hooks close anything and again at the very end,
 * so a graceful stop (SIGTERM) loses none.
 */
import { type BeforeApplicationShutdown, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { ModelCallRecord } from '../../ai/client/model-call';
import { currentCallContext } from '../call-context';
import { LabelCap } from './label-cap';
import { toLedgerEntry } from './ledger-entry';
import { type LedgerEntryEvent, ledgerEntryChannel } from './ledger-events';
import type { LedgerSettings } from './ledger-settings';
import type { LedgerStore } from './ledger-store';
import { LedgerWriter } from './ledger-writer';
import { MemoryLedgerStore } from './memory-ledger-store';
import { type ConfiguredModels, ModelLabels } from './model-labels';
import { PostgresLedgerStore } from './postgres-ledger-store';
import { PriceLookup } from './pricing';
import type { UsageQuery, UsageRow } from './usage-query';

/** How often the durable store folds old entries into daily roll-ups (and once at start). */
export const ROLLUP_INTERVAL_MS = 3_600_000;
/** Entries held in memory while the store is failing, in batches; older ones are dropped. */
const MAX_PENDING_BATCHES = 50;

export function createLedgerStore(settings: LedgerSettings): LedgerStore {
  const store = settings.store;
  return store.kind === 'postgres'
    ? new PostgresLedgerStore({ url: store.url, table: store.table, retentionDays: store.retentionDays })
    : new MemoryLedgerStore(store.maxEntries);
}

export class LedgerService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Ledger');
  private readonly writer: LedgerWriter;
  private readonly tenantLabels: LabelCap;
  private readonly modelLabels: ModelLabels;
  private rollUpTimer?: NodeJS.Timeout;
  private lastWriteError = 0;
  private readonly prices: PriceLookup;

  constructor(
    private readonly settings: LedgerSettings,
    private readonly store: LedgerStore,
    private readonly now: () => number = Date.now,
    configuredModels: ConfiguredModels = () => false,
  ) {
    this.tenantLabels = new LabelCap(settings.metricsMaxTenants);
    this.modelLabels = new ModelLabels(settings.pricing, configuredModels);
    this.prices = new PriceLookup(settings.pricing);
    this.writer = new LedgerWriter(store, {
      batchSize: settings.batchSize,
      flushIntervalMs: settings.flushIntervalMs,
      maxPending: settings.batchSize * MAX_PENDING_BATCHES,
      onWriteError: (error) => this.reportWriteError(error),
    });
  }

  /** The AiClient sink: cheap and synchronous; the store write happens later, in a batch. */
  readonly record = (record: ModelCallRecord): void => {
    const entry = toLedgerEntry(record, currentCallContext(), this.prices.priceOf(record.provider, record.providerKind, record.model), this.now());
    this.writer.add(entry);
    if (ledgerEntryChannel.hasSubscribers) {
      const event: LedgerEntryEvent = {
        tenant: this.tenantLabels.label(entry.tenant),
        provider: entry.provider,
        model: this.modelLabels.label(record.provider, record.providerKind, entry.model),
        status: entry.status,
        inputTokens: entry.inputTokens,
        outputTokens: entry.outputTokens,
        cachedTokens: entry.cachedTokens,
        costMicros: entry.costMicros,
      };
      ledgerEntryChannel.publish(event);
    }
  };

  /** Sums over the store, after writing what this process still holds, so a caller sees its own calls. */
  async usage(query: UsageQuery): Promise<UsageRow[]> {
    await this.writer.flush();
    return this.store.usage(query);
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Entries lost: dropped while the store failed for long, or recorded after the shutdown's last flush. */
  get dropped(): number {
    return this.writer.dropped;
  }

  onModuleInit(): void {
    if (this.settings.store.kind !== 'postgres') return;
    const rollUp = () =>
      void this.store.rollUp(this.now()).catch((error: unknown) => this.logger.warn(`roll-up failed: ${errorName(error)}`));
    rollUp();
    this.rollUpTimer = setInterval(rollUp, ROLLUP_INTERVAL_MS);
    this.rollUpTimer.unref();
  }

  /** After the HTTP drain, before any module closes its pools: the calls of drained requests are all recorded. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.writer.flush();
  }

  /** Streams cut at the drain deadline record in their finally, possibly after the first flush: flush again. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.rollUpTimer);
    await this.writer.close();
    if (this.writer.queued > 0 || this.writer.dropped > 0) {
      this.logger.error(`ledger stopped with ${this.writer.queued} entries unwritten and ${this.writer.dropped} dropped`);
    }
    await this.store.close();
  }

  /** At most one line a minute while the store keeps failing; never an entry's contents. */
  private reportWriteError(error: unknown): void {
    const now = this.now();
    if (now - this.lastWriteError < 60_000) return;
    this.lastWriteError = now;
    this.logger.warn(`ledger write failed (${errorName(error)}); ${this.writer.queued} entries kept for the next attempt`);
  }
}

function errorName(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : ((error as Error)?.name ?? 'error');
}
