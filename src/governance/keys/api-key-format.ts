import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../common/sha256';

/**
 * API keys look like `tg_<id>_<secret>`: a 12-hex-digit public id (shown in lists and logs) and 32 random
 * bytes in base64url. The secret's entropy makes a plain SHA-256 of the whole key safe to store
 * (docs/decisions.md, governance): no slow hash is needed and a lookup costs one digest.
 */
export const API_KEY_PREFIX = 'tg_';
const ID_BYTES = 6;
const SECRET_BYTES = 32;
const KEY_PATTERN = /^tg_([0-9a-f]{12})_([A-Za-z0-9_-]{43,128})$/;
const ID_PATTERN = /^[0-9a-f]{12}$/;

export interface GeneratedKey {
  id: string;
  /** The whole key: shown once, never stored. */
  key: string;
  hash: string;
}

export function generateApiKey(): GeneratedKey {
  const id = randomBytes(ID_BYTES).toString('hex');
  const key = `${API_KEY_PREFIX}${id}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
  return { id, key, hash: hashApiKey(key) };
}

/** The key's id, or undefined when the text is not shaped like a key (refused without a store lookup). */
export function apiKeyId(text: string): string | undefined {
  return KEY_PATTERN.exec(text)?.[1];
}

/** Hex SHA-256 of the whole key: what the stores keep and look keys up by. */
export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

export function isApiKeyId(text: string): boolean {
  return ID_PATTERN.test(text);
}
