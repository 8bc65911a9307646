import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How often the server looks for an idle window after it listens, and how idle the window must be. */
const IDLE_WINDOW_MS = 5_000;
const IDLE_UTILIZATION = 0.02;
/** Node 20's young generation once shrunk is 2 x 1 MiB; at most 2 x 16 MiB. */
const SHRUNK_YOUNG_GENERATION = 4 * 2 ** 20;
/** Idle windows with a collection before the server stops trying (a minute). */
const MAX_TRIES = 12;

/**
 * One full garbage collection after the server's first idle window (`npm start`, `tollgate serve`), repeated at
 * the next idle windows until the young generation has shrunk, for a minute at most.
 *
 * Starting the application grows V8's young generation to its maximum (2 x 16 MiB on Node 20) and nothing
 * shrinks it back while the process idles: V8 shrinks it at a collection that sees a low allocation rate, and
 * its memory reducer, which would run one, is not armed by start-up. This collection is that one, taken at the
 * end of the first window of 5 s (the span over which V8 measures the allocation rate) with the event loop
 * nearly idle; the start-up summary's provider probes often fill the first window. Idle RSS falls from ~130 to
 * ~95 MiB (bench/RESULTS.md, issue 29 part 5). A busy server skips it, its young generation being in use; once
 * a load ends, V8's memory reducer, armed by the load's collections, shrinks it within ~30 s.
 *
 * The collector is taken from a new context (`--expose-gc` applies to contexts made after it is set) and the
 * flag cleared again, so neither the application's global nor a worker started later gets a `gc`; only the
 * server's entries call this, never a host app of the modules.
 */
export function collectGarbageOnceIdle(): void {
  let since = performance.eventLoopUtilization();
  let collect: (() => void) | undefined;
  let tries = 0;
  const timer = setInterval(() => {
    const window = performance.eventLoopUtilization(since);
    since = performance.eventLoopUtilization();
    if (window.utilization > IDLE_UTILIZATION) return;
    if (!collect) {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as () => void;
      setFlagsFromString('--no-expose-gc');
    }
    collect();
    // V8 shrinks the young generation only at a collection that follows a window of low allocation, which the
    // first idle window is not always (start-up's allocations may still count): try again at the next ones.
    if (youngGenerationSize() <= SHRUNK_YOUNG_GENERATION || ++tries >= MAX_TRIES) clearInterval(timer);
  }, IDLE_WINDOW_MS);
  timer.unref();
}

function youngGenerationSize(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}
