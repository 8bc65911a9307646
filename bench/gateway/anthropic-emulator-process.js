'use strict';
// The Anthropic emulator of test/emulators in its own process (as emulator-process.js does for OpenAI).
// Prints "ready <base url>" once listening; its logs are emptied every second, since under load they only grow.
require('./ts-require');
const { startAnthropicEmulator } = require('../../test/emulators/anthropic-emulator.ts');

startAnthropicEmulator({ apiKey: process.env.BENCH_API_KEY, models: ['claude-bench'] }).then((emulator) => {
  setInterval(() => {
    emulator.server.requests.length = 0;
    emulator.streamsSent.length = 0;
  }, 1000).unref();
  process.stdout.write(`ready ${emulator.url}\n`);
  process.on('SIGTERM', () => emulator.close().then(() => process.exit(0)));
});
