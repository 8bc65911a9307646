'use strict';
// Preloaded into the server by bench/compare (node --expose-gc --require): on SIGWINCH it collects garbage
// and writes "memory rss=<bytes> heap=<bytes>" to stderr, so the benchmark can compare the heap before and
// after a run without the noise of garbage not yet collected. SIGWINCH because Nest's shutdown hooks take
// SIGUSR2 (and SIGUSR1 starts the inspector); its default action is to do nothing.
process.on('SIGWINCH', () => {
  if (typeof global.gc === 'function') {
    global.gc();
    global.gc();
  }
  const { rss, heapUsed } = process.memoryUsage();
  process.stderr.write(`memory rss=${rss} heap=${heapUsed}\n`);
});
