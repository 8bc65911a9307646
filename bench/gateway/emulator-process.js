'use strict';
// The OpenAI emulator of test/emulators in its own process, so it never shares an event loop with the
// load generator. Prints "ready <base url>" once listening.
require('./ts-require');
const { OpenAiEmulator } = require('../../test/emulators/openai-emulator.ts');

OpenAiEmulator.start({ apiKey: process.env.BENCH_API_KEY }).then((emulator) => {
  process.stdout.write(`ready ${emulator.url}\n`);
  process.on('SIGTERM', () => emulator.close().then(() => process.exit(0)));
});
