import type { UsageRow } from '../governance/ledger/usage-query';
import { formatUsd, usageCsv, usageJson, usageTable } from './usage-report';

const rows: UsageRow[] = [
  { group: 'gpt-4o', calls: 12, inputTokens: 1200, outputTokens: 300, cachedTokens: 100, costMicros: 6_250, unpricedCalls: 0, estimatedCalls: 1 },
  { group: 'my, "local" model', calls: 1, inputTokens: 5, outputTokens: 2, cachedTokens: 0, costMicros: 0, unpricedCalls: 1, estimatedCalls: 0 },
  { group: null, calls: 2, inputTokens: 8, outputTokens: 4, cachedTokens: 0, costMicros: 2_500_000, unpricedCalls: 0, estimatedCalls: 0 },
];

describe('usage report formats', () => {
  it('writes dollars to the micro-dollar, dropping zeros beyond the cents', () => {
    expect(formatUsd(6_250)).toBe('0.00625');
    expect(formatUsd(2_500_000)).toBe('2.50');
    expect(formatUsd(0)).toBe('0.00');
    expect(formatUsd(1)).toBe('0.000001');
  });

  it('aligns the table: groups left, numbers right, a missing group as (none)', () => {
    expect(usageTable(rows, 'model')).toBe(
      [
        'model              calls  input_tokens  output_tokens  cached_tokens  cost_usd  unpriced_calls  estimated_calls',
        'gpt-4o                12          1200            300            100   0.00625               0                1',
        'my, "local" model      1             5              2              0      0.00               1                0',
        '(none)                 2             8              4              0      2.50               0                0',
        '',
      ].join('\n'),
    );
  });

  it('quotes CSV cells that need it and leaves a missing group empty', () => {
    expect(usageCsv(rows, 'model').split('\r\n')).toEqual([
      'model,calls,input_tokens,output_tokens,cached_tokens,cost_usd,unpriced_calls,estimated_calls',
      'gpt-4o,12,1200,300,100,0.00625,0,1',
      '"my, ""local"" model",1,5,2,0,0.00,1,0',
      ',2,8,4,0,2.50,0,0',
      '',
    ]);
  });

  it('prints a hostile model name inert: no raw control character in the table, no formula or extra row in CSV', () => {
    const hostile: UsageRow[] = [
      { ...rows[0], group: 'openai/\u001b[2J\u001b]8;;https://evil.example\u0007gpt-4o\u001b]8;;\u0007' },
      { ...rows[0], group: 'openai/x\nt-2         999' },
      { ...rows[0], group: '=HYPERLINK("https://evil.example","gpt-4o")' },
    ];
    const table = usageTable(hostile, 'model');
    expect(table).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(table.split('\n')).toHaveLength(5);
    expect(table).toContain('openai/\\x1b[2J\\x1b]8;;https://evil.example\\x07gpt-4o');
    const csv = usageCsv(hostile, 'model').split('\r\n');
    expect(csv).toHaveLength(5);
    expect(csv[2]).toBe('openai/x\\x0at-2         999,12,1200,300,100,0.00625,0,1');
    expect(csv[3]).toBe(`"'=HYPERLINK(""https://evil.example"",""gpt-4o"")",12,1200,300,100,0.00625,0,1`);
  });

  it('writes JSON rows with numbers, dollars and null groups', () => {
    const parsed = JSON.parse(usageJson(rows, { from: 0, to: 86_400_000, groupBy: 'model' }));
    expect(parsed).toMatchObject({ from: '1970-01-01T00:00:00.000Z', to: '1970-01-02T00:00:00.000Z', group_by: 'model', tenant: null });
    expect(parsed.rows[0]).toEqual({ group: 'gpt-4o', calls: 12, input_tokens: 1200, output_tokens: 300, cached_tokens: 100, cost_usd: 0.00625, unpriced_calls: 0, estimated_calls: 1 });
    expect(parsed.rows[2].group).toBeNull();
  });
});
