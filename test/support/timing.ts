/**
 * The fastest of `runs` runs of `work`, in ms: what the work itself costs. A GC pause or a busy CI core
 * delays one run, not all of them, so a time bound on this does not fail by chance.
 */
export function fastestRunMs(work: () => unknown, runs = 3): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    const started = process.hrtime.bigint();
    work();
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - started) / 1e6);
  }
  return fastest;
}

/**
 * Waits, when fewer than `marginMs` are left of the current UTC minute, until the next one has begun: RPM counts
 * in fixed UTC minutes, so a test that makes a few calls and expects the later ones refused would see them
 * admitted again if the minute turned between them.
 */
export async function awayFromMinuteEdge(marginMs = 5_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
