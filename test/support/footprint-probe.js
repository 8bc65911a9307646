'use strict';
// Preloaded into a server by test/idle-footprint.e2e-spec.ts (node --expose-gc --require): on SIGWINCH it
// collects garbage and writes one line "footprint <json>" to stderr: RSS and heap used in bytes, and the npm
// packages loaded so far (from require.cache), so the test can tell what a configuration really loads.
process.on('SIGWINCH', () => {
  global.gc();
  global.gc();
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const at = file.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const parts = file.slice(at + 'node_modules/'.length).split('/');
    packages.add(parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]);
  }
  const { rss, heapUsed } = process.memoryUsage();
  process.stderr.write(`footprint ${JSON.stringify({ rss, heapUsed, packages: [...packages].sort() })}\n`);
});
