import type { KeyStore, KeyStoreSettings } from './key-store';
import { MemoryKeyStore } from './memory-key-store';
import { PostgresKeyStore } from './postgres-key-store';
import { RedisKeyStore } from './redis-key-store';

export function createKeyStore(settings: KeyStoreSettings): KeyStore {
  switch (settings.kind) {
    case 'redis':
      return new RedisKeyStore(settings.url, settings.keyPrefix);
    case 'postgres':
      return new PostgresKeyStore(settings.url, settings.table);
    default:
      return new MemoryKeyStore();
  }
}
