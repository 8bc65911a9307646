'use strict';
// HS256 verify cost, µs/op: the KeyObject built once at start (what Tollgate does) against a plain
// string secret, which makes every verify re-derive the key.
const { createSecretKey } = require('node:crypto');
const { JwtService } = require('@nestjs/jwt');
const { BENCH_SECRET, BENCH_TOKEN } = require('./bench-fixtures');

function timePerOp(label, iterations, fn) {
  for (let i = 0; i < 2000; i++) fn(); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  const micros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
  return { label, micros };
}

function measureVerify(iterations = Number(process.env.VERIFY_ITERATIONS || 50000)) {
  const jwt = new JwtService();
  const key = createSecretKey(Buffer.from(BENCH_SECRET));
  const withKeyObject = timePerOp('HS256 verify, KeyObject (Tollgate)', iterations, () =>
    jwt.verify(BENCH_TOKEN, { secret: key, algorithms: ['HS256'] }),
  );
  const withString = timePerOp('HS256 verify, string secret', Math.ceil(iterations / 10), () =>
    jwt.verify(BENCH_TOKEN, { secret: BENCH_SECRET, algorithms: ['HS256'] }),
  );
  return [
    `${withKeyObject.label.padEnd(40)} ${withKeyObject.micros.toFixed(2)} µs/op`,
    `${withString.label.padEnd(40)} ${withString.micros.toFixed(2)} µs/op (${(withString.micros / withKeyObject.micros).toFixed(1)}x slower)`,
  ];
}

module.exports = { measureVerify };

if (require.main === module) for (const line of measureVerify()) console.log(line);
