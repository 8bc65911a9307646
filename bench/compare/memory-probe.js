'use strict';
// Preloaded into the server by bench/compare (node --expose-gc --require): on SIGUSR2 it collects garbage
// and writes "memory rss=<bytes> heap=<bytes>" to stderr, so the benchmark can compare the heap before and
// after a run without the noise of garbage not yet collected.
process.on('SIGUSR2', () => {
  if (typeof global.gc === 'function') {
    global.gc();
    global.gc();
  }
  const { rss, heapUsed } = process.memoryUsage();
  process.stderr.write(`memory rss=${rss} heap=${heapUsed}\n`);
});
