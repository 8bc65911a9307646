'use strict';
// The floor for any gateway in bench/compare: a bare Node proxy with no routing, auth, validation or
// mapping, forwarding each POST to the upstream base URL (argv[2]) over a keep-alive undici pool and piping
// the answer back, streams included. Prints "ready <url>" once listening.
const http = require('node:http');
const { Pool } = require('undici');

const upstream = new URL(process.argv[2]);
const pool = new Pool(upstream.origin, { connections: 64 });

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    pool
      .request({
        method: 'POST',
        path: upstream.pathname + req.url.replace(/^\/v1/, ''),
        headers: { 'content-type': 'application/json', authorization: req.headers.authorization },
        body: Buffer.concat(chunks),
      })
      .then(async (answer) => {
        res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] });
        for await (const chunk of answer.body) res.write(chunk);
        res.end();
      })
      .catch(() => {
        res.writeHead(502).end();
      });
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`ready http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => pool.close().then(() => process.exit(0))));
