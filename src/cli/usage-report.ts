/**
 * `tollgate usage` output: an aligned text table, JSON (the shape of GET /v1/usage's rows) or CSV
 * (RFC 4180). Money in dollars, as everywhere outside the code and the stores. Group values (a model name a
 * caller chose) are printed inert: control characters escaped, CSV cells never read as formulas.
 */
import { microsToUsd } from '../governance/ledger/pricing';
import type { UsageRow } from '../governance/ledger/usage-query';
import { csvCell, printable } from './printable-text';

export const USAGE_FORMATS = ['table', 'json', 'csv'] as const;
export type UsageFormat = (typeof USAGE_FORMATS)[number];

const COLUMNS = ['group', 'calls', 'input_tokens', 'output_tokens', 'cached_tokens', 'cost_usd', 'unpriced_calls', 'estimated_calls'] as const;

/** A group without a value (calls without a tenant, say) reads `(none)` in the table and is empty in CSV. */
const NONE = '(none)';

function cells(row: UsageRow): string[] {
  return [
    row.group ?? '',
    String(row.calls),
    String(row.inputTokens),
    String(row.outputTokens),
    String(row.cachedTokens),
    formatUsd(row.costMicros),
    String(row.unpricedCalls),
    String(row.estimatedCalls),
  ];
}

/** Dollars with the micro-dollar precision the ledger keeps, without trailing zeros beyond cents. */
export function formatUsd(micros: number): string {
  const text = microsToUsd(micros).toFixed(6);
  return text.replace(/(\.\d\d\d*?)0+$/, '$1');
}

export function usageTable(rows: readonly UsageRow[], groupBy: string): string {
  const header = [groupBy, ...COLUMNS.slice(1)];
  const body = rows.map((row) => {
    const line = cells(row);
    line[0] = row.group === null ? NONE : printable(row.group);
    return line;
  });
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((line) => line[column].length)));
  // Text left-aligned, numbers right-aligned.
  const render = (line: string[]) =>
    line.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ').trimEnd();
  return [render(header), ...body.map(render)].join('\n') + '\n';
}

export function usageCsv(rows: readonly UsageRow[], groupBy: string): string {
  const lines = [[groupBy, ...COLUMNS.slice(1)], ...rows.map(cells)];
  return lines.map((line) => line.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

export function usageJson(rows: readonly UsageRow[], meta: { from: number; to: number; groupBy: string; tenant?: string }): string {
  return (
    JSON.stringify(
      {
        from: new Date(meta.from).toISOString(),
        to: new Date(meta.to).toISOString(),
        group_by: meta.groupBy,
        tenant: meta.tenant ?? null,
        rows: rows.map((row) => Object.fromEntries(COLUMNS.map((column, index) => [column, jsonCell(row, index)]))),
      },
      null,
      2,
    ) + '\n'
  );
}

function jsonCell(row: UsageRow, index: number): string | number | null {
  if (index === 0) return row.group;
  if (COLUMNS[index] === 'cost_usd') return microsToUsd(row.costMicros);
  return Number(cells(row)[index]);
}
