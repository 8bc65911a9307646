'use strict';
// bench/tracing: what OpenTelemetry tracing costs the chat path, in CPU time per request. Three Tollgate
// processes on the OpenAI emulator: off (no observability section: the SDK is not loaded), on (every request
// sampled, spans and GenAI metrics exported over OTLP/HTTP to a local sink that reads and drops them), and
// on-unsampled (sampling_ratio 0: spans are created but not recorded or exported). Interleaved rounds whose
// order rotates, fresh processes every round; each variant's CPU per request is divided by the off one of the
// same round, and the medians of those ratios are printed (compareChatCpu in the harness). The exporters' CPU
// counts: they run in the server.
// Usage: npm run build && node bench/tracing/run.js
//   (env: CONNECTIONS=10 DURATION=5 ROUNDS=5 WARMUP=2 ROUTE=chat|stream)
const path = require('node:path');
const { chatCpuSettings, compareChatCpu, start, stop } = require('../gateway/harness');

function configs(sink) {
  const otel = (extra) => ['version: 1', 'observability:', '  otel:', `    endpoint: ${sink}`, ...extra.map((line) => `    ${line}`), ''].join('\n');
  return { off: 'version: 1\n', on: otel([]), 'on-unsampled': otel(['sampling_ratio: 0']) };
}

async function main() {
  const sink = await start([path.join(__dirname, 'otlp-sink.js')], {}, /ready (\S+)/);
  try {
    const settings = chatCpuSettings();
    await compareChatCpu({ heading: `bench/tracing: /openai/v1/chat/completions${settings.stream ? ' (stream)' : ''}`, configs: configs(sink.match), settings });
  } finally {
    await stop(sink.child);
  }
}

main().catch((error) => {
  process.stderr.write(`bench/tracing: ${error.message}\n`);
  process.exit(1);
});
