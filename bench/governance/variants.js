'use strict';
// The governance variants of bench/governance/run.js, also taken by bench/gateway/profile.js (VARIANT=<name>):
// each one's configuration file and, for those called with an API key, the key made through the admin API.
const { Pool } = require('undici');

const STORE = process.env.GOVERNANCE_STORE === 'redis' ? 'redis' : 'memory';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = 'bench-admin-token';

const store = (name) => (STORE === 'redis' ? `redis, url: "${REDIS_URL}", key_prefix: "tollgate:bench-governance:${name}:"` : 'memory');
const BUDGET = `budgets: { store: ${store('budgets')}, rules: [{ scope: key, id: "*", tokens: 1000000000000, period: day }] }`;
/** Each variant's governance section and whether it is called with an API key. */
const VARIANTS = {
  none: { yaml: ['ledger: { enabled: false }'], key: false },
  ledger: { yaml: ['ledger: { store: memory }'], key: false },
  key: { yaml: ['ledger: { enabled: false }'], key: true },
  'key+budget': { yaml: ['ledger: { enabled: false }', BUDGET], key: true },
  governed: { yaml: ['ledger: { store: memory }', BUDGET], key: true },
};
const NAMES = Object.keys(VARIANTS);

function configYaml(variant) {
  return ['version: 1', 'governance:', `  admin_token: "${ADMIN_TOKEN}"`, `  keys: { store: ${store('keys')} }`, ...variant.yaml.map((line) => `  ${line}`), ''].join('\n');
}

/** An API key of the Tollgate at `origin`, made through its admin API; `name` shows in its key list. */
async function createKey(origin, name = 'bench-governance') {
  const pool = new Pool(origin, { connections: 1 });
  try {
    const response = await pool.request({
      method: 'POST',
      path: '/v1/admin/keys',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ tenant: 'bench', name }),
    });
    const body = await response.body.json();
    if (response.statusCode !== 201) throw new Error(`a Tollgate refused to create a key: ${JSON.stringify(body)}`);
    return body.key;
  } finally {
    await pool.close();
  }
}

module.exports = { ADMIN_TOKEN, NAMES, STORE, VARIANTS, configYaml, createKey };
