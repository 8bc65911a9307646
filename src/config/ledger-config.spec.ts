import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { problemsOf } from '../../test/support/config-problems';
import { findPrice } from '../governance/ledger/pricing';
import { LEDGER_ENTRY_BYTES } from '../governance/ledger/ledger-settings';
import { loadConfig } from './config.loader';

describe('ledger configuration', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-ledger-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const load = (yaml: string) => {
    writeFileSync(join(dir, 'tollgate.yaml'), yaml);
    return loadConfig({ cwd: dir, configPath: 'tollgate.yaml', env: {} });
  };

  it('records in memory by default, priced from the packaged table', () => {
    const { ledger } = load('version: 1\n');
    expect(ledger).toMatchObject({ enabled: true, store: { kind: 'memory', maxEntries: Math.floor((16 * 1024 * 1024) / LEDGER_ENTRY_BYTES) }, batchSize: 200, flushIntervalMs: 1000, metricsMaxTenants: 100 });
    expect(findPrice(ledger.pricing, 'openai', 'openai', 'gpt-4o-mini')).toEqual({ input: 0.15, output: 0.6, cachedInput: 0.075 });
  });

  it('sizes the memory store by max_bytes, or by max_entries when that is given instead', () => {
    expect(load('version: 1\ngovernance: { ledger: { max_bytes: 1650000 } }\n').ledger.store).toEqual({ kind: 'memory', maxEntries: Math.floor(1_650_000 / LEDGER_ENTRY_BYTES) });
    expect(load('version: 1\ngovernance: { ledger: { max_entries: 500 } }\n').ledger.store).toEqual({ kind: 'memory', maxEntries: 500 });
    expect(problemsOf(() => load('version: 1\ngovernance: { ledger: { max_entries: 500, max_bytes: 100000 } }\n'))).toEqual([
      expect.stringContaining('governance.ledger.max_bytes: give max_entries or max_bytes, not both'),
    ]);
    expect(problemsOf(() => load('version: 1\ngovernance: { ledger: { store: postgres, url: "postgres://db/l", max_bytes: 100000 } }\n'))).toEqual([
      expect.stringContaining('governance.ledger.max_bytes: applies to store memory only'),
    ]);
  });

  it('maps the postgres store and seconds, and lets configured prices replace or drop the packaged ones', () => {
    const { ledger } = load(`version: 1
governance:
  ledger: { store: postgres, url: "postgres://db/ledger", table: usage_log, retention_days: 7, batch_size: 50, flush_interval: 0.25 }
  pricing:
    use_defaults: false
    models:
      "local/llama3*": { input: 0.1, output: 0.2 }
`);
    expect(ledger.store).toEqual({ kind: 'postgres', url: 'postgres://db/ledger', table: 'usage_log', retentionDays: 7 });
    expect(ledger.flushIntervalMs).toBe(250);
    expect(findPrice(ledger.pricing, 'local', 'ollama', 'llama3.1:8b')).toEqual({ input: 0.1, output: 0.2 });
    expect(findPrice(ledger.pricing, 'openai', 'openai', 'gpt-4o')).toBeUndefined();
  });

  it('names the key of every bad setting', () => {
    expect(problemsOf(() => load('version: 1\ngovernance: { ledger: { store: postgres } }\n'))).toEqual([
      expect.stringContaining('governance.ledger.url: is required for store postgres'),
    ]);
    expect(problemsOf(() => load('version: 1\ngovernance: { ledger: { table: x, max_entries: 5 } }\n'))).toEqual([
      expect.stringContaining('governance.ledger.table: applies to store postgres only'),
    ]);
    const schemaProblems = problemsOf(() =>
      load('version: 1\ngovernance: { ledger: { store: sqlite, batch_size: 0 }, pricing: { models: { "gpt-4o": { input: -1, output: 1 } } } }\n'),
    ).join('\n');
    expect(schemaProblems).toContain('governance.ledger.store');
    expect(schemaProblems).toContain('governance.ledger.batch_size');
    expect(schemaProblems).toContain('governance.pricing.models');
  });
});
