'use strict';
// HS256 verify cost, µs/op: Tollgate's TokenVerifier for a token seen before (remembered: time claims only)
// and with the verified-token cache off (full signature check every time), @nestjs/jwt with a KeyObject
// alone, and with a plain string secret, which re-derives the key on every verify.
const { createSecretKey } = require('node:crypto');
const { JwtService } = require('@nestjs/jwt');
const { resolveAuthOptions } = require('../../dist/src/index.js');
const { TokenVerifier } = require('../../dist/src/auth/token-verifier.js');
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
  const verifier = new TokenVerifier(resolveAuthOptions({ jwtSecret: BENCH_SECRET }));
  const uncached = new TokenVerifier(resolveAuthOptions({ jwtSecret: BENCH_SECRET, verifiedTokenCacheSize: 0 }));
  if (!verifier.verify(BENCH_TOKEN).ok || !uncached.verify(BENCH_TOKEN).ok) throw new Error('the bench token does not verify');
  const repeat = timePerOp('Tollgate verify, token seen before', iterations, () => verifier.verify(BENCH_TOKEN));
  const full = timePerOp('Tollgate verify, cache off', iterations, () => uncached.verify(BENCH_TOKEN));
  const withKeyObject = timePerOp('HS256 @nestjs/jwt verify, KeyObject', iterations, () =>
    jwt.verify(BENCH_TOKEN, { secret: key, algorithms: ['HS256'] }),
  );
  const withString = timePerOp('HS256 @nestjs/jwt verify, string secret', Math.ceil(iterations / 10), () =>
    jwt.verify(BENCH_TOKEN, { secret: BENCH_SECRET, algorithms: ['HS256'] }),
  );
  return [
    `${repeat.label.padEnd(40)} ${repeat.micros.toFixed(2)} µs/op`,
    `${full.label.padEnd(40)} ${full.micros.toFixed(2)} µs/op`,
    `${withKeyObject.label.padEnd(40)} ${withKeyObject.micros.toFixed(2)} µs/op`,
    `${withString.label.padEnd(40)} ${withString.micros.toFixed(2)} µs/op (${(withString.micros / withKeyObject.micros).toFixed(1)}x slower)`,
  ];
}

module.exports = { measureVerify };

if (require.main === module) for (const line of measureVerify()) console.log(line);
