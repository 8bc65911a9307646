import crypto, { createHash } from 'node:crypto';

type OneShotHash = {
  (algorithm: string, data: string, encoding: 'buffer'): Buffer;
  (algorithm: string, data: string, encoding: 'hex'): string;
};

/** Node's one-shot hash (20.12+) skips the Hash object, the larger part of the cost; older 20.x lack it. */
const oneShotHash = (crypto as { hash?: OneShotHash }).hash;

export function sha256(text: string): Buffer {
  return oneShotHash ? oneShotHash('sha256', text, 'buffer') : createHash('sha256').update(text).digest();
}

export function sha256Hex(text: string): string {
  return oneShotHash ? oneShotHash('sha256', text, 'hex') : createHash('sha256').update(text).digest('hex');
}
