import { encodeSecret, generateSecretBytes, parseBoundedInteger, secretHeader } from './secret-generator';

describe('secret generator', () => {
  it('returns the requested number of bytes, different every time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const bytes = generateSecretBytes(32);
      expect(bytes).toHaveLength(32);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(50);
  });

  it('encodes hex and base64 losslessly', () => {
    const bytes = generateSecretBytes(64);
    const hex = encodeSecret(bytes, 'hex');
    const base64 = encodeSecret(bytes, 'base64');
    expect(hex).toMatch(/^[0-9a-f]{128}$/);
    expect(Buffer.from(hex, 'hex').equals(bytes)).toBe(true);
    expect(Buffer.from(base64, 'base64').equals(bytes)).toBe(true);
  });

  it('states length, entropy and format in the header, as a comment line', () => {
    expect(secretHeader(64, 'hex', 1)).toBe(
      '# tollgate: secret of 64 random bytes (512 bits of entropy each), hex format, from crypto.randomBytes',
    );
    expect(secretHeader(16, 'base64', 3)).toContain('3 secrets of 16 random bytes (128 bits');
  });

  it.each([
    ['16', 16],
    ['1024', 1024],
    ['64', 64],
  ])('accepts %s within range', (text, value) => {
    expect(parseBoundedInteger(text, 16, 1024)).toBe(value);
  });

  it.each(['15', '1025', '-1', '3.5', '1e3', '0x20', ' 64', '', 'abc', '99999999999'])('refuses %p', (text) => {
    expect(parseBoundedInteger(text, 16, 1024)).toBeUndefined();
  });
});
