'use strict';
// Preloaded into a gateway by bench/compare with PHASES=1 (node --require): where one request's time goes
// between the client and the upstream, from Node's HTTP server and undici's diagnostics channels, so the
// same probe reads Tollgate and the bare proxy. Only requests that had the process to themselves are kept
// (the sequential latency runs; load runs overlap and are skipped), as chat or chat-stream by the upstream
// answer's content type. On SIGTERM it writes "phases <json>" to stderr: the median microseconds of each phase.
const diagnosticsChannel = require('node:diagnostics_channel');

const PHASES = [
  ['request headers in -> upstream dispatch', 'start', 'dispatch'],
  ['dispatch -> upstream request sent', 'dispatch', 'sent'],
  ['upstream request sent -> its response headers', 'sent', 'headers'],
  ['upstream headers -> upstream body complete', 'headers', 'complete'],
  ['upstream complete -> client response finished', 'complete', 'finish'],
  ['total in the gateway', 'start', 'finish'],
];

const micros = () => Number(process.hrtime.bigint()) / 1000;
const rows = { chat: [], 'chat-stream': [] };
let inFlight = 0;
let current;

function mark(name) {
  if (current && current[name] === undefined) current[name] = micros();
}

diagnosticsChannel.subscribe('http.server.request.start', ({ response }) => {
  inFlight += 1;
  // 'close' comes for every response, finished or cut off (a load run ends with requests in flight).
  response.once('close', () => (inFlight -= 1));
  current = inFlight === 1 ? { start: micros() } : undefined;
});
diagnosticsChannel.subscribe('undici:request:create', () => mark('dispatch'));
diagnosticsChannel.subscribe('undici:client:sendHeaders', () => mark('sent'));
diagnosticsChannel.subscribe('undici:request:headers', ({ response }) => {
  mark('headers');
  if (current) current.streamed = isEventStream(response.headers);
});
diagnosticsChannel.subscribe('undici:request:trailers', () => mark('complete'));
diagnosticsChannel.subscribe('http.server.response.finish', () => {
  mark('finish');
  if (current && inFlight === 1 && PHASES.every(([, from, to]) => current[from] !== undefined && current[to] !== undefined)) {
    rows[current.streamed ? 'chat-stream' : 'chat'].push(current);
  }
  current = undefined;
});

/** undici's raw headers: name, value, name, value, ... as buffers or strings. */
function isEventStream(rawHeaders) {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (String(rawHeaders[i]).toLowerCase() === 'content-type') return String(rawHeaders[i + 1]).startsWith('text/event-stream');
  }
  return false;
}

function median(values) {
  const sorted = values.sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

process.prependListener('SIGTERM', () => {
  const phases = {};
  for (const [scenario, kept] of Object.entries(rows)) {
    phases[scenario] = { requests: kept.length };
    for (const [name, from, to] of PHASES) phases[scenario][name] = kept.length === 0 ? null : Math.round(median(kept.map((row) => row[to] - row[from])) * 10) / 10;
  }
  process.stderr.write(`phases ${JSON.stringify(phases)}\n`);
});
