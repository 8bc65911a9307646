'use strict';
// The OpenAI emulator of test/emulators in its own process, so it never shares an event loop with the
// load generator. Prints "ready <base url>" once listening.
// BENCH_FAULT_5XX and BENCH_FAULT_RESET (fractions of requests, e.g. 0.1 and 0.05) make it answer that
// share of requests with a 503 or a reset connection, drawn at random; on SIGTERM it prints
// "served <n> requests: <x> 5xx, <y> resets".
require('./ts-require');
const { OpenAiEmulator } = require('../../test/emulators/openai-emulator.ts');

OpenAiEmulator.start({ apiKey: process.env.BENCH_API_KEY }).then((emulator) => {
  const faults = [
    { fault: { kind: 'status', status: 503, body: { error: { message: 'The server is overloaded.', type: 'server_error', param: null, code: null } } }, probability: Number(process.env.BENCH_FAULT_5XX || 0) },
    { fault: { kind: 'reset' }, probability: Number(process.env.BENCH_FAULT_RESET || 0) },
  ].filter((entry) => entry.probability > 0);
  emulator.server.faultRandomly(faults);
  // The request log and the answers kept are for tests; under load they would only grow.
  let served = 0;
  setInterval(() => {
    served += emulator.server.requests.length;
    emulator.server.requests.length = 0;
    emulator.responsesSent.length = 0;
    emulator.responseStreamsSent.length = 0;
  }, 1000).unref();
  process.stdout.write(`ready ${emulator.url}\n`);
  process.on('SIGTERM', () => {
    served += emulator.server.requests.length;
    const met = emulator.server.randomFaultsMet;
    process.stdout.write(`served ${served} requests: ${met.status ?? 0} 5xx, ${met.reset ?? 0} resets\n`);
    emulator.close().then(() => process.exit(0));
  });
});
