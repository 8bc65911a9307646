import { createHash } from 'node:crypto';
import { apiKeyId, generateApiKey, hashApiKey, isApiKeyId } from './api-key-format';

describe('API key format', () => {
  it('generates tg_<12 hex>_<43 base64url> keys whose id and hash match', () => {
    const generated = generateApiKey();
    expect(generated.key).toMatch(/^tg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(apiKeyId(generated.key)).toBe(generated.id);
    expect(generated.hash).toBe(createHash('sha256').update(generated.key).digest('hex'));
    expect(hashApiKey(generated.key)).toBe(generated.hash);
  });

  it('never generates the same key twice', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey().key));
    expect(keys.size).toBe(200);
  });

  it.each([
    ['no prefix', 'ab12cd34ef56_' + 'x'.repeat(43)],
    ['short id', 'tg_ab12cd34ef5_' + 'x'.repeat(43)],
    ['upper-case id', 'tg_AB12CD34EF56_' + 'x'.repeat(43)],
    ['short secret', 'tg_ab12cd34ef56_' + 'x'.repeat(42)],
    ['secret with a bad character', 'tg_ab12cd34ef56_' + 'x'.repeat(42) + '+'],
    ['overlong secret', 'tg_ab12cd34ef56_' + 'x'.repeat(129)],
    ['trailing space', 'tg_ab12cd34ef56_' + 'x'.repeat(43) + ' '],
    ['empty', ''],
  ])('refuses a malformed key: %s', (_label, text) => {
    expect(apiKeyId(text)).toBeUndefined();
  });

  it('recognises key ids', () => {
    expect(isApiKeyId('ab12cd34ef56')).toBe(true);
    expect(isApiKeyId('ab12cd34ef5')).toBe(false);
    expect(isApiKeyId('../etc/passwd')).toBe(false);
  });
});
