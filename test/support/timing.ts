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
