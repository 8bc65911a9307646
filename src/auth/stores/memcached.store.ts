import KeyvMemcache from '@keyv/memcache';
import type { StoredData } from 'keyv';

/**
 * @keyv/memcache with two fixes: a miss is `undefined` (the adapter reports an already-expired entry,
 * which makes Keyv spend a second round trip deleting it), and `clear()` refuses instead of sending
 * `flush_all`, which would wipe every key of every application on the server. Tollgate clears its
 * permission cache by switching generation (see permission-cache.ts), never through `clear()`.
 */
export class MemcachedStore extends KeyvMemcache {
  constructor(servers: string[], deserialize: (data: unknown) => unknown) {
    super(servers.join(','), {
      deserialize,
      retries: 1,
      timeout: 1,
      conntimeout: 1,
      keepAlive: true,
      // memjs logs to the console by default; errors still reach Keyv's 'error' event and the logger.
      logger: { log: () => undefined },
    });
  }

  override async get<Value>(key: string): Promise<StoredData<Value>> {
    const data = (await super.get<Value>(key)) as { value?: unknown; expires?: number } | undefined;
    return (data && data.value === undefined && data.expires === 0 ? undefined : data) as StoredData<Value>;
  }

  override async clear(): Promise<void> {
    throw new Error(
      'clear() is not supported on a memcached store: memcached can only flush the whole server; ' +
        'Tollgate invalidates its permission cache by generation instead',
    );
  }

  async disconnect(): Promise<void> {
    this.client.close();
  }
}
