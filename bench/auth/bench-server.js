'use strict';
// One benchmark variant in its own process, so the load generator and the server each get a core.
// Usage: node bench-server.js <variant> <port>; prints "ready" on stdout once listening.
require('reflect-metadata');
const { Controller, Get, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { FastifyAdapter } = require('@nestjs/platform-fastify');
const { AuthModule, RbacService } = require('../../dist/src/index.js');
const { LimitsModule } = require('../../dist/src/limits/limits.module.js');
const { BENCH_SECRET, BENCH_RECORD, REDIS_URL } = require('./bench-fixtures');

const [variant, port] = process.argv.slice(2);

class InvoicesController {
  list() {
    return { ok: true };
  }
}
Controller('api/v1/:slug')(InvoicesController);
Get('sales/invoices')(InvoicesController.prototype, 'list', Object.getOwnPropertyDescriptor(InvoicesController.prototype, 'list'));

const tenantChecks = {
  jwtSecret: BENCH_SECRET,
  validateSubdomain: true,
  validatePathnameSlug: true,
  validateTenantId: true,
};

/** The server's tenant limit, high enough never to trip: the cost of counting is what is measured. */
const tenantLimit = (store) => LimitsModule.forRoot({ enabled: true, store, tenant: { limit: 1e9, windowMs: 60_000 }, routes: [] });
const limitsPrefix = `tollgate:bench-limits:${process.pid}:`;

const variants = {
  unguarded: [],
  'jwt+tenant': [AuthModule.forRoot(tenantChecks)],
  'jwt+tenant+rbac(memory)': [
    AuthModule.forRoot({ ...tenantChecks, rbacEnabled: true, rbacCacheStore: 'memory', permissionsCacheStore: 'memory' }),
  ],
  'jwt+tenant+rbac(redis)': [
    AuthModule.forRoot({
      ...tenantChecks,
      rbacEnabled: true,
      rbacCacheStore: 'redis',
      rbacCacheStoreOptions: { url: REDIS_URL },
      permissionsCacheStore: 'redis',
      permissionsCacheStoreOptions: { url: REDIS_URL },
    }),
  ],
  // After AuthModule, as the server imports it, so the tenant guard runs after authentication.
  'jwt+tenant+limit(memory)': [AuthModule.forRoot(tenantChecks), tenantLimit({ kind: 'memory' })],
  'jwt+tenant+limit(redis)': [AuthModule.forRoot(tenantChecks), tenantLimit({ kind: 'redis', url: REDIS_URL, keyPrefix: limitsPrefix })],
};

async function main() {
  if (!(variant in variants)) throw new Error(`unknown variant ${variant}`);
  class BenchModule {}
  Module({ imports: variants[variant], controllers: [InvoicesController] })(BenchModule);
  const app = await NestFactory.create(BenchModule, new FastifyAdapter(), { logger: false });
  if (variant.includes('rbac')) await app.get(RbacService).setRecord(BENCH_RECORD);
  await app.listen(Number(port), '127.0.0.1');
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
}

main().catch((error) => {
  process.stderr.write(`bench server failed: ${error.message}\n`);
  process.exit(1);
});
