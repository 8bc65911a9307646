import { parseInstant, parseSince, UsageQueryError, utcDay } from './usage-query';

const NOW = Date.parse('2026-11-27T12:00:00Z');

describe('usage query parts', () => {
  it('reads durations back from now in days, hours and minutes', () => {
    expect(parseSince('7d', '--since', NOW)).toBe(NOW - 7 * 86_400_000);
    expect(parseSince('12h', '--since', NOW)).toBe(NOW - 12 * 3_600_000);
    expect(parseSince('30m', '--since', NOW)).toBe(NOW - 30 * 60_000);
  });

  it('refuses a duration without a unit, or with another, naming the parameter', () => {
    for (const bad of ['7', '1w', '-1d', 'd', '']) {
      expect(() => parseSince(bad, '--since', NOW)).toThrow(new UsageQueryError('--since', '--since must be a duration like 7d, 12h or 30m'));
    }
  });

  it('refuses impossible dates and date-times without an offset', () => {
    expect(() => parseInstant('2026-02-30T25:00:00Z', 'from')).toThrow(UsageQueryError);
    expect(() => parseInstant('2026-02-30', 'from')).toThrow(UsageQueryError);
    expect(() => parseInstant('2026-02-31T10:00:00Z', 'to')).toThrow(/^to must be a date/);
    expect(() => parseInstant('2026-11-20 10:00', 'from')).toThrow(UsageQueryError);
    expect(parseInstant(' 2026-11-20 ', 'from')).toBe(Date.parse('2026-11-20T00:00:00Z'));
  });

  it('names UTC days', () => {
    expect(utcDay(Date.parse('2026-11-27T23:59:59.999Z'))).toBe('2026-11-27');
    expect(utcDay(Date.parse('2026-11-28T00:30:00+01:00'))).toBe('2026-11-27');
  });
});
