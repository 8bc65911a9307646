'use strict';
const { createHmac } = require('node:crypto');

const BENCH_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

const BENCH_RECORD = {
  last_update: 1,
  permissions: { admin: ['sales/*:*'], viewer: ['reports:get', '%r{^sales/invoices/\\d+$}:get'] },
};

const base64url = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function signHs256(payload, secret = BENCH_SECRET) {
  const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url(payload)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

const now = Math.floor(Date.now() / 1000);
const BENCH_TOKEN = signHs256({
  user_id: 7,
  tenant_id: 42,
  subdomain: 'acme',
  pathname_slugs: ['north', 'south'],
  role_ids: ['viewer', 'admin'],
  iat: now,
  exp: now + 24 * 3600,
});

const BENCH_REQUEST = {
  path: '/api/v1/north/sales/invoices',
  headers: { host: 'acme.example.com', authorization: `Bearer ${BENCH_TOKEN}`, 'x-tenant-id': '42' },
};

module.exports = { BENCH_SECRET, BENCH_RECORD, BENCH_TOKEN, BENCH_REQUEST, REDIS_URL, signHs256 };
