import { DEFAULT_AGENT_LIMITS, resolveAgentLimits } from './agent-limits';

describe('resolveAgentLimits', () => {
  it('fills docs/decisions.md B3 defaults and keeps given values', () => {
    expect(DEFAULT_AGENT_LIMITS).toEqual({
      maxLoops: 5,
      maxTaskBytes: 16_384,
      maxResponseBytes: 65_536,
      maxContextBytes: 64_000,
      maxActionBytes: 8_192,
      maxObservationBytes: 16_384,
    });
    expect(resolveAgentLimits({ maxLoops: 2, maxActionBytes: undefined })).toEqual({ ...DEFAULT_AGENT_LIMITS, maxLoops: 2 });
  });

  it('refuses values below their minimum, fractions, and a context that cannot hold the task and one observation', () => {
    expect(() => resolveAgentLimits({ maxLoops: 0 })).toThrow('agent limit maxLoops must be an integer of at least 1 (got 0)');
    expect(() => resolveAgentLimits({ maxObservationBytes: 100.5 })).toThrow('maxObservationBytes');
    expect(() => resolveAgentLimits({ maxContextBytes: 20_000 })).toThrow('maxContextBytes (20000) must be at least maxTaskBytes + maxObservationBytes (32768)');
  });
});
