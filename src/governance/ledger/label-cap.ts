/**
 * Bounds the distinct values of one metric label: the first `max` distinct values keep their name, every
 * later one is counted as `other`, so a caller-chosen value (a tenant, a model name) cannot grow the
 * metric's series without bound.
 */
export const OTHER_LABEL = 'other';
/** The label of a call without the value (no tenant). */
export const NONE_LABEL = 'none';

export class LabelCap {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  label(value: string | null): string {
    if (value === null) return NONE_LABEL;
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return OTHER_LABEL;
    this.seen.add(value);
    return value;
  }
}
