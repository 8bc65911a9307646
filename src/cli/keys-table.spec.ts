import { publicKeyView } from '../governance/keys/api-key-record';
import { keysTable } from './keys-table';

describe('keysTable', () => {
  const now = Date.parse('2026-01-10T00:00:00Z');
  const base = { tenant: 't-1', createdAt: '2026-01-01T00:00:00.000Z', hash: 'f'.repeat(64) };

  it('aligns one line per key under the header, without the hash', () => {
    const table = keysTable([
      publicKeyView({ ...base, id: 'ab12cd34ef56', name: 'ci', subTenant: 'north', models: ['openai/*', 'anthropic/claude-*'], budget: { microUsd: 5_000_000, period: 'day' }, rpm: 60 }, now),
      publicKeyView({ ...base, id: '0123456789ab', budget: { tokens: 1000, period: 'month' }, revokedAt: '2026-01-02T00:00:00.000Z' }, now),
    ]);
    expect(table).toBe(
      [
        'ID            NAME  TENANT     STATUS   MODELS                       BUDGET             RPM  TPM  EXPIRES',
        'ab12cd34ef56  ci    t-1/north  active   openai/*,anthropic/claude-*  $5/day             60   -    -',
        '0123456789ab  -     t-1        revoked  *                            1000 tokens/month  -    -    -',
        '',
      ].join('\n'),
    );
    expect(table).not.toContain('fff');
  });

  it('prints control characters a stored name or tenant holds as escapes, never raw', () => {
    const table = keysTable([publicKeyView({ ...base, id: 'ab12cd34ef56', name: 'ci\u001b[2J\nab12cd34ef57  forged', tenant: 't\u001b]8;;https://evil.example\u0007x' }, now)]);
    expect(table).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(table.split('\n')).toHaveLength(3);
    expect(table).toContain('ci\\x1b[2J\\x0aab12cd34ef57  forged');
    expect(table).toContain('t\\x1b]8;;https://evil.example\\x07x');
  });

  it('prints the header alone for no keys', () => {
    expect(keysTable([])).toBe('ID  NAME  TENANT  STATUS  MODELS  BUDGET  RPM  TPM  EXPIRES\n');
  });
});
