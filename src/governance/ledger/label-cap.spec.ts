import { LabelCap, NONE_LABEL, OTHER_LABEL } from './label-cap';

describe('LabelCap', () => {
  it('keeps the first distinct values, then answers other, and keeps answering the kept ones', () => {
    const cap = new LabelCap(2);
    expect(['t-1', 't-2', 't-3', 't-1', 't-4', 't-2'].map((value) => cap.label(value))).toEqual(['t-1', 't-2', OTHER_LABEL, 't-1', OTHER_LABEL, 't-2']);
  });

  it('labels a missing value none without spending a place, and a cap of 0 puts everything in other', () => {
    expect(new LabelCap(1).label(null)).toBe(NONE_LABEL);
    expect(new LabelCap(0).label('t-1')).toBe(OTHER_LABEL);
  });
});
