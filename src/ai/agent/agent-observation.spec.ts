import { serializeObservation } from './agent-observation';
import { utf8Length } from './utf8-truncate';

describe('serializeObservation', () => {
  it('keeps a result that fits as it is', () => {
    const { text, truncated } = serializeObservation({ tool: 't', ok: true, result: { a: 'é' } }, 100);
    expect(truncated).toBe(false);
    expect(JSON.parse(text)).toEqual({ tool: 't', ok: true, result: { a: 'é' } });
  });

  it('cuts an oversized multi-byte result to valid JSON within the limit', () => {
    const result = { text: '"quoted" 日本語😀\n'.repeat(500) };
    for (const max of [128, 129, 130, 500, 1001, 4096]) {
      const { text, truncated } = serializeObservation({ tool: 'big', ok: true, result }, max);
      expect(truncated).toBe(true);
      expect(utf8Length(text)).toBeLessThanOrEqual(max);
      const parsed = JSON.parse(text);
      expect(parsed).toMatchObject({ tool: 'big', ok: true, truncated: true });
      expect(JSON.stringify(result).startsWith(parsed.content)).toBe(true);
      expect(parsed.content).not.toContain('\uFFFD');
      // An escaped or multi-byte character that does not fit may leave a few bytes unused, never more.
      expect(max - utf8Length(text)).toBeLessThan(8);
    }
  });

  it('serializes failures as a category only, and survives cycles and BigInt', () => {
    expect(JSON.parse(serializeObservation({ tool: 't', ok: false, error: 'rate_limited' }, 200).text)).toEqual({ tool: 't', ok: false, error: 'rate_limited' });
    const cyclic: Record<string, unknown> = { n: 10n };
    cyclic.self = cyclic;
    expect(JSON.parse(serializeObservation({ tool: 't', ok: true, result: cyclic }, 200).text)).toEqual({ tool: 't', ok: true, result: { n: '10', self: '[circular]' } });
  });
});
