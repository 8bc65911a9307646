'use strict';
// The OpenAI and Anthropic emulators of test/emulators in one process of their own, so they never share an
// event loop with the load generator or the gateway. Prints "ready <openai base url> <anthropic base url>".
require('../gateway/ts-require');
const { OpenAiEmulator } = require('../../test/emulators/openai-emulator.ts');
const { startAnthropicEmulator } = require('../../test/emulators/anthropic-emulator.ts');

Promise.all([OpenAiEmulator.start({ apiKey: process.env.BENCH_OPENAI_KEY }), startAnthropicEmulator({ apiKey: process.env.BENCH_ANTHROPIC_KEY, reply: 'Hello there, how can I help?' })]).then(
  ([openai, anthropic]) => {
    // The request logs and the answers kept are for tests; under load they would only grow.
    setInterval(() => {
      openai.server.requests.length = 0;
      openai.responsesSent.length = 0;
      openai.responseStreamsSent.length = 0;
      anthropic.server.requests.length = 0;
      anthropic.streamsSent.length = 0;
    }, 1000).unref();
    process.stdout.write(`ready ${openai.url} ${anthropic.url}\n`);
    process.on('SIGTERM', () => Promise.all([openai.close(), anthropic.close()]).then(() => process.exit(0)));
  },
);
