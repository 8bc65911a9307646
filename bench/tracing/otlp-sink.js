'use strict';
// A stand-in OTLP/HTTP collector for bench/tracing: reads each export whole and answers 200, so the traced
// Tollgate pays for building, serialising and sending its exports as it would in front of a real collector.
const http = require('node:http');

const server = http.createServer((request, response) => {
  request.on('data', () => undefined);
  request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`ready http://127.0.0.1:${server.address().port}\n`));
