'use strict';
// Preloaded into a server by test/idle-footprint.e2e-spec.ts (node --expose-gc --require): on SIGWINCH it
// writes one line "footprint <json>" to stderr: RSS and the young generation's size (bytes) as the server
// left them, then, after a full collection of its own, heap used and the npm packages loaded so far (from
// require.cache), so the test can tell what a configuration really loads. On SIGURG it writes "young <bytes>", the
// young generation's size alone, collecting nothing, so the test can wait for the server's own collection.
const v8 = require('node:v8');

const youngGenerationSize = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;

process.on('SIGURG', () => process.stderr.write(`young ${youngGenerationSize()}\n`));

process.on('SIGWINCH', () => {
  const { rss } = process.memoryUsage();
  const youngGeneration = youngGenerationSize();
  global.gc();
  global.gc();
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const at = file.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const parts = file.slice(at + 'node_modules/'.length).split('/');
    packages.add(parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]);
  }
  const { heapUsed } = process.memoryUsage();
  process.stderr.write(`footprint ${JSON.stringify({ rss, youngGeneration, heapUsed, packages: [...packages].sort() })}\n`);
});
