import { mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { SqlExecutor } from './sql-executor';

/**
 * The worker: opens PGlite with its bundled pgvector extension and answers one message per statement.
 * It loads PGlite with a plain Node `require` anchored at this file, so the package resolves as it does for
 * Tollgate itself, and PGlite's own dynamic imports of Node built-ins work under any host loader.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const load = createRequire(workerData.anchor);
const { PGlite } = load('@electric-sql/pglite');
const { vector } = load('@electric-sql/pglite/vector');
const opened = PGlite.create(workerData.dataDir, { extensions: { vector } });
parentPort.on('message', async ({ id, sql, params, close }) => {
  try {
    const db = await opened;
    if (close) {
      await db.close();
      parentPort.postMessage({ id, rows: [] });
      return;
    }
    const result = await db.query(sql, params);
    parentPort.postMessage({ id, rows: result.rows });
  } catch (error) {
    const code = error && typeof error.code === 'string' ? error.code : undefined;
    parentPort.postMessage({ id, error: { code, message: String((error && error.message) || error) } });
  }
});
`;

interface Reply {
  id: number;
  rows?: unknown[];
  error?: { code?: string; message: string };
}

/**
 * Embedded PostgreSQL (WASM) in a worker thread: data in `dataDir`, or in memory when it is unset. The
 * database's CPU work stays off the caller's event loop, and nothing is loaded until a store is opened.
 */
export async function createPgliteExecutor(dataDir?: string): Promise<SqlExecutor> {
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { anchor: __filename, dataDir } });
  const pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (error: Error) => void }>();
  let next = 0;
  let failure: Error | undefined;

  const failAll = (error: Error) => {
    failure = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    // Only while a statement is in flight does the worker keep the process alive.
    if (pending.size === 0) worker.unref();
    if (reply.error) waiter.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    else waiter.resolve(reply.rows ?? []);
  });
  worker.on('error', (error) => failAll(error));
  worker.on('exit', () => failAll(new Error('PGlite worker stopped')));
  worker.unref();

  const send = (message: { sql?: string; params?: unknown[]; close?: true }): Promise<unknown[]> => {
    if (failure) return Promise.reject(failure);
    const id = next++;
    worker.ref();
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...message });
    });
  };

  try {
    await send({ sql: 'select 1' });
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  return {
    query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await send({ sql, params })) as T[] }),
    close: async () => {
      if (!failure) await send({ close: true });
      await worker.terminate();
    },
  };
}
