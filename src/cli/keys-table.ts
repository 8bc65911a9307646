import type { PublicKeyView } from '../governance/keys/api-key-record';
import { printable } from './printable-text';

const COLUMNS: Array<[string, (view: PublicKeyView) => string]> = [
  ['ID', (view) => view.id],
  ['NAME', (view) => view.name ?? '-'],
  ['TENANT', (view) => (view.sub_tenant ? `${view.tenant}/${view.sub_tenant}` : view.tenant)],
  ['STATUS', (view) => view.status],
  ['MODELS', (view) => view.models?.join(',') ?? '*'],
  ['BUDGET', (view) => (view.budget ? `${view.budget.usd !== undefined ? `$${view.budget.usd}` : `${view.budget.tokens} tokens`}/${view.budget.period}` : '-')],
  ['RPM', (view) => (view.rpm === null ? '-' : String(view.rpm))],
  ['TPM', (view) => (view.tpm === null ? '-' : String(view.tpm))],
  ['EXPIRES', (view) => view.expires_at ?? '-'],
];

/**
 * Keys as an aligned text table, one line per key under a header line. Cells are read from the key store, which
 * anyone with write access to it may have filled: control characters are printed escaped, never obeyed.
 */
export function keysTable(views: readonly PublicKeyView[]): string {
  const rows = [COLUMNS.map(([title]) => title), ...views.map((view) => COLUMNS.map(([, cell]) => printable(cell(view))))];
  const widths = COLUMNS.map((_, index) => Math.max(...rows.map((row) => row[index].length)));
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]))).join('  ')).join('\n') + '\n';
}
