import { createHmac, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { sign, type Algorithm } from 'jsonwebtoken';
import type { AuthModuleOptions } from './auth-module-options.interface';
import { resolveAuthOptions } from './auth.options';
import { TokenVerifier, type VerifyResult } from './token-verifier';

/**
 * TokenVerifier (docs/decisions.md A1, A2): honest tokens from jsonwebtoken, hostile ones built by hand with
 * node:crypto so no library can tidy them up. The clock is fixed: every verify gets NOW.
 */

const NOW = 1_700_000_000;
const SECRET = 'token-verifier-spec-secret-of-more-than-32-bytes';
const OTHER_SECRET = 'another-secret-that-is-also-more-than-32-bytes!';
const ENV = { NODE_ENV: 'test' } as NodeJS.ProcessEnv;

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const p521 = generateKeyPairSync('ec', { namedCurve: 'secp521r1' });
const publicPem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
const RSA_PUBLIC_PEM = publicPem(rsa.publicKey);

const claims = (extra: Record<string, unknown> = {}) => ({ user_id: 7, iat: NOW - 10, exp: NOW + 600, ...extra });

function verifier(options: Partial<AuthModuleOptions> = {}): TokenVerifier {
  return new TokenVerifier(resolveAuthOptions({ jwtSecret: SECRET, ...options } as AuthModuleOptions, ENV));
}

function signed(payload: object, key: string | KeyObject = SECRET, algorithm: Algorithm = 'HS256'): string {
  // jsonwebtoken keeps a given iat and adds the real time otherwise; claims() always gives one.
  return sign(payload, key, { algorithm });
}

const b64 = (text: string) => Buffer.from(text).toString('base64url');

/** A JWS from raw header and payload text, HMAC-signed with `secret` (or with no signature). */
function crafted(header: string, payload: string, secret?: string | Buffer, hash = 'sha256'): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const signature = secret === undefined ? '' : createHmac(hash, secret).update(input).digest('base64url');
  return `${input}.${signature}`;
}

function expectCode(result: VerifyResult, code: string): void {
  expect(result).toEqual({ ok: false, code, detail: expect.any(String) });
}

function expectOk(result: VerifyResult, userId: unknown = 7): void {
  expect(result.ok).toBe(true);
  expect(result.ok && result.payload.user_id).toBe(userId);
}

describe('TokenVerifier accepts valid tokens', () => {
  it.each(['HS256', 'HS384', 'HS512'] as const)('%s', (jwtAlgorithm) => {
    expectOk(verifier({ jwtAlgorithm }).verify(signed(claims(), SECRET, jwtAlgorithm), NOW));
  });

  it.each([
    ['RS256', rsa],
    ['PS256', rsa],
    ['ES256', p256],
    ['ES512', p521],
  ] as const)('%s with the PEM public key', (jwtAlgorithm, pair) => {
    const check = verifier({ jwtSecret: publicPem(pair.publicKey), jwtAlgorithm });
    expectOk(check.verify(signed(claims(), pair.privateKey, jwtAlgorithm), NOW));
  });

  it('returns the whole payload', () => {
    const payload = claims({ tenant_id: 'acme', pathname_slugs: ['north'], nested: { a: [1, 2] } });
    const result = verifier().verify(signed(payload), NOW);
    expect(result).toEqual({ ok: true, payload });
  });

  it('uses the real clock when no time is given', () => {
    const now = Math.floor(Date.now() / 1000);
    expectOk(verifier().verify(signed({ user_id: 7, exp: now + 60 })));
    expectCode(verifier().verify(signed({ user_id: 7, exp: now - 60 })), 'token_expired');
  });
});

describe('TokenVerifier refuses forged and confused algorithms', () => {
  it('alg none with an empty signature is invalid_algorithm, as with a signature', () => {
    const token = crafted('{"alg":"none","typ":"JWT"}', JSON.stringify(claims()));
    expect(token.endsWith('.')).toBe(true);
    expectCode(verifier().verify(token, NOW), 'invalid_algorithm');
    expectCode(verifier({ jwtSecret: RSA_PUBLIC_PEM, jwtAlgorithm: 'RS256' }).verify(token, NOW), 'invalid_algorithm');
  });

  it('another algorithm without a signature is invalid_algorithm; the configured one without a signature stays malformed_token', () => {
    expectCode(verifier().verify(crafted('{"alg":"HS512","typ":"JWT"}', JSON.stringify(claims())), NOW), 'invalid_algorithm');
    expectCode(verifier().verify(crafted('{"alg":"HS256","typ":"JWT"}', JSON.stringify(claims())), NOW), 'malformed_token');
  });

  it('alg none (any spelling) carrying a signature', () => {
    for (const alg of ['none', 'None', 'NONE']) {
      const token = crafted(JSON.stringify({ alg, typ: 'JWT' }), JSON.stringify(claims()), SECRET);
      expectCode(verifier().verify(token, NOW), 'invalid_algorithm');
    }
  });

  it('an HS256 token signed with the RSA public key as HMAC secret, against an RS256 verifier', () => {
    const check = verifier({ jwtSecret: RSA_PUBLIC_PEM, jwtAlgorithm: 'RS256' });
    const confused = crafted('{"alg":"HS256","typ":"JWT"}', JSON.stringify(claims()), RSA_PUBLIC_PEM);
    expectCode(check.verify(confused, NOW), 'invalid_algorithm');
    // The same HMAC under a header that claims RS256 does not verify as an RSA signature either.
    const relabelled = crafted('{"alg":"RS256","typ":"JWT"}', JSON.stringify(claims()), RSA_PUBLIC_PEM);
    expectCode(check.verify(relabelled, NOW), 'invalid_signature');
  });

  it('a header without alg, or with a non-string alg', () => {
    expectCode(verifier().verify(crafted('{"typ":"JWT"}', JSON.stringify(claims()), SECRET), NOW), 'invalid_algorithm');
    expectCode(verifier().verify(crafted('{"alg":["HS256"]}', JSON.stringify(claims()), SECRET), NOW), 'invalid_algorithm');
  });

  it.each([
    ['HS384 to an HS256 verifier', { jwtAlgorithm: 'HS256' }, () => signed(claims(), SECRET, 'HS384')],
    ['HS256 to an HS512 verifier', { jwtAlgorithm: 'HS512' }, () => signed(claims(), SECRET, 'HS256')],
    ['RS512 to an RS256 verifier', { jwtSecret: RSA_PUBLIC_PEM, jwtAlgorithm: 'RS256' }, () => signed(claims(), rsa.privateKey, 'RS512')],
    ['PS256 to an RS256 verifier', { jwtSecret: RSA_PUBLIC_PEM, jwtAlgorithm: 'RS256' }, () => signed(claims(), rsa.privateKey, 'PS256')],
    ['RS256 to a PS256 verifier', { jwtSecret: RSA_PUBLIC_PEM, jwtAlgorithm: 'PS256' }, () => signed(claims(), rsa.privateKey, 'RS256')],
  ] as const)('a token of the same family signed with another algorithm: %s', (_, options, token) => {
    expectCode(verifier(options as Partial<AuthModuleOptions>).verify(token(), NOW), 'invalid_algorithm');
  });

  it('a header that names the configured algorithm over a signature made with another hash', () => {
    const token = crafted('{"alg":"HS256","typ":"JWT"}', JSON.stringify(claims()), SECRET, 'sha512');
    expectCode(verifier().verify(token, NOW), 'invalid_signature');
  });
});

describe('TokenVerifier refuses a crit header (RFC 7515 §4.1.11)', () => {
  /** A correctly signed HS256 token whose header adds `extra`. */
  const withHeader = (extra: Record<string, unknown>) => crafted(JSON.stringify({ alg: 'HS256', typ: 'JWT', ...extra }), JSON.stringify(claims()), SECRET);

  it.each([
    ['an extension Tollgate does not understand', { crit: ['exp'], exp: NOW + 600 }],
    ['RFC 7797 unencoded payload', { crit: ['b64'], b64: false }],
    ['an extension the header does not carry', { crit: ['urn:example:policy'] }],
    ['a registered parameter', { crit: ['alg'] }],
    ['a name twice', { crit: ['exp', 'exp'], exp: NOW + 600 }],
    ['an empty list', { crit: [] }],
    ['a string instead of a list', { crit: 'exp', exp: NOW + 600 }],
    ['a list holding a non-string', { crit: [1] }],
    ['null', { crit: null }],
    ['an object', { crit: { exp: true } }],
  ])('%s: 401 malformed_token, with a detail that names crit and not the sender\'s text', (_, extra) => {
    const result = verifier().verify(withHeader(extra), NOW);
    expectCode(result, 'malformed_token');
    expect(!result.ok && result.detail).toMatch(/crit/);
    expect(!result.ok && result.detail).not.toMatch(/urn:example/);
  });

  it('is refused on every presentation: a refused token is never remembered', () => {
    const check = verifier();
    const token = withHeader({ crit: ['exp'], exp: NOW + 600 });
    expectCode(check.verify(token, NOW), 'malformed_token');
    expectCode(check.verify(token, NOW), 'malformed_token');
    // The same claims and key without crit verify, so the refusal is the header's alone.
    expectOk(check.verify(withHeader({ exp: NOW + 600 }), NOW));
  });

  it('an RS256 token with crit, against an RS256 verifier', () => {
    const check = verifier({ jwtSecret: RSA_PUBLIC_PEM, jwtAlgorithm: 'RS256' });
    const input = `${b64(JSON.stringify({ alg: 'RS256', crit: ['exp'], exp: NOW + 600 }))}.${b64(JSON.stringify(claims()))}`;
    const signature = cryptoSign('sha256', Buffer.from(input), rsa.privateKey).toString('base64url');
    expectCode(check.verify(`${input}.${signature}`, NOW), 'malformed_token');
  });
});

describe('TokenVerifier refuses bad signatures', () => {
  it('an HS token signed with another secret', () => {
    expectCode(verifier().verify(signed(claims(), OTHER_SECRET), NOW), 'invalid_signature');
  });

  it('an RS256 token signed with another RSA key', () => {
    const check = verifier({ jwtSecret: RSA_PUBLIC_PEM, jwtAlgorithm: 'RS256' });
    expectCode(check.verify(signed(claims(), otherRsa.privateKey, 'RS256'), NOW), 'invalid_signature');
  });

  it('an ES256 token whose payload was changed after signing', () => {
    const check = verifier({ jwtSecret: publicPem(p256.publicKey), jwtAlgorithm: 'ES256' });
    const [header, , signature] = signed(claims(), p256.privateKey, 'ES256').split('.');
    const tampered = `${header}.${b64(JSON.stringify(claims({ user_id: 1 })))}.${signature}`;
    expectCode(check.verify(tampered, NOW), 'invalid_signature');
  });

  it('a hand-made ES256 signature in the JOSE (r||s) form verifies; the DER form is not a JWS signature', () => {
    const check = verifier({ jwtSecret: publicPem(p256.publicKey), jwtAlgorithm: 'ES256' });
    const input = `${b64('{"alg":"ES256","typ":"JWT"}')}.${b64(JSON.stringify(claims()))}`;
    const jose = cryptoSign('sha256', Buffer.from(input), { key: p256.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    const der = cryptoSign('sha256', Buffer.from(input), { key: p256.privateKey, dsaEncoding: 'der' }).toString('base64url');
    expectOk(check.verify(`${input}.${jose}`, NOW));
    // DER has the wrong length for ES256, so it cannot even be decoded as an (r, s) pair.
    expectCode(check.verify(`${input}.${der}`, NOW), 'malformed_token');
    // A JOSE-sized signature over other bytes decodes and fails to verify.
    const wrong = cryptoSign('sha256', Buffer.from(`${input}x`), { key: p256.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    expectCode(check.verify(`${input}.${wrong}`, NOW), 'invalid_signature');
  });

  it('a signature that was removed', () => {
    const [header, payload] = signed(claims()).split('.');
    expectCode(verifier().verify(`${header}.${payload}.`, NOW), 'malformed_token');
  });
});

describe('TokenVerifier time claims', () => {
  it('refuses an expired token, including at the exact second of exp', () => {
    expectCode(verifier().verify(signed(claims({ exp: NOW - 1 })), NOW), 'token_expired');
    expectCode(verifier().verify(signed(claims({ exp: NOW })), NOW), 'token_expired');
    expectOk(verifier().verify(signed(claims({ exp: NOW + 1 })), NOW));
  });

  it('refuses a token whose nbf is in the future', () => {
    expectCode(verifier().verify(signed(claims({ nbf: NOW + 60 })), NOW), 'token_not_active');
    expectOk(verifier().verify(signed(claims({ nbf: NOW })), NOW));
  });

  it('refuses a token issued in the future (iat)', () => {
    expectCode(verifier().verify(signed(claims({ iat: NOW + 60 })), NOW), 'token_not_active');
    expectOk(verifier().verify(signed(claims({ iat: NOW })), NOW));
  });

  it('clockTolerance lets a just-expired, just-not-yet-valid or just-issued token pass, and no more', () => {
    const tolerant = verifier({ clockTolerance: 30 });
    expectOk(tolerant.verify(signed(claims({ exp: NOW - 10 })), NOW));
    expectOk(tolerant.verify(signed(claims({ nbf: NOW + 20 })), NOW));
    expectOk(tolerant.verify(signed(claims({ iat: NOW + 30 })), NOW));
    expectCode(tolerant.verify(signed(claims({ exp: NOW - 31 })), NOW), 'token_expired');
    expectCode(tolerant.verify(signed(claims({ nbf: NOW + 31 })), NOW), 'token_not_active');
    expectCode(tolerant.verify(signed(claims({ iat: NOW + 31 })), NOW), 'token_not_active');
    expectCode(verifier().verify(signed(claims({ exp: NOW - 10 })), NOW), 'token_expired');
  });

  it('requires exp by default; requireExp: false accepts a token without it', () => {
    const noExp = signed({ user_id: 7, iat: NOW });
    expectCode(verifier().verify(noExp, NOW), 'invalid_claims');
    expectCode(verifier({ requireExp: true }).verify(noExp, NOW), 'invalid_claims');
    expectOk(verifier({ requireExp: false }).verify(noExp, NOW));
    // requireExp: false does not switch expiry off for a token that has exp.
    expectCode(verifier({ requireExp: false }).verify(signed(claims({ exp: NOW - 1 })), NOW), 'token_expired');
  });

  it.each([
    ['a string exp', { exp: String(NOW + 600) }],
    ['a null exp', { exp: null }],
    ['a string nbf', { nbf: 'soon' }],
    ['a string iat', { iat: String(NOW) }],
  ])('refuses %s as invalid_claims', (_, extra) => {
    expectCode(verifier().verify(crafted('{"alg":"HS256","typ":"JWT"}', JSON.stringify(claims(extra)), SECRET), NOW), 'invalid_claims');
  });
});

describe('TokenVerifier issuer and audience', () => {
  const IDP = 'https://idp.example.com';

  it('accepts a matching issuer (string or list) and refuses another or none', () => {
    expectOk(verifier({ issuer: IDP }).verify(signed(claims({ iss: IDP })), NOW));
    expectOk(verifier({ issuer: ['https://other.example.com', IDP] }).verify(signed(claims({ iss: IDP })), NOW));
    expectCode(verifier({ issuer: IDP }).verify(signed(claims({ iss: 'https://evil.example.com' })), NOW), 'invalid_issuer');
    expectCode(verifier({ issuer: [IDP] }).verify(signed(claims({ iss: `${IDP}/` })), NOW), 'invalid_issuer');
    expectCode(verifier({ issuer: IDP }).verify(signed(claims()), NOW), 'invalid_issuer');
  });

  it('accepts a matching audience (string or list, claim string or array) and refuses another or none', () => {
    expectOk(verifier({ audience: 'tollgate' }).verify(signed(claims({ aud: 'tollgate' })), NOW));
    expectOk(verifier({ audience: 'tollgate' }).verify(signed(claims({ aud: ['billing', 'tollgate'] })), NOW));
    expectOk(verifier({ audience: ['billing', 'tollgate'] }).verify(signed(claims({ aud: 'billing' })), NOW));
    expectCode(verifier({ audience: 'tollgate' }).verify(signed(claims({ aud: 'billing' })), NOW), 'invalid_audience');
    expectCode(verifier({ audience: ['a', 'b'] }).verify(signed(claims({ aud: ['c', 'd'] })), NOW), 'invalid_audience');
    expectCode(verifier({ audience: 'tollgate' }).verify(signed(claims()), NOW), 'invalid_audience');
  });

  it('ignores iss and aud when neither check is configured', () => {
    expectOk(verifier().verify(signed(claims({ iss: 'anyone', aud: 'anything' })), NOW));
  });
});

describe('TokenVerifier size and shape', () => {
  it('refuses a token longer than maxTokenBytes as token_too_large, before decoding', () => {
    const small = verifier({ maxTokenBytes: 256 });
    const big = signed(claims({ filler: 'x'.repeat(300) }));
    expect(big.length).toBeGreaterThan(256);
    expectCode(small.verify(big, NOW), 'token_too_large');
    // Valid under the default limit of 8192.
    expectOk(verifier().verify(big, NOW));
    expectCode(verifier().verify('x'.repeat(8193), NOW), 'token_too_large');
    expectCode(verifier().verify(signed(claims({ filler: 'y'.repeat(8200) })), NOW), 'token_too_large');
  });

  it('accepts a token of exactly maxTokenBytes and refuses one byte more', () => {
    const token = signed(claims({ filler: 'x'.repeat(400) }));
    expectOk(verifier({ maxTokenBytes: token.length }).verify(token, NOW));
    expectCode(verifier({ maxTokenBytes: token.length - 1 }).verify(token, NOW), 'token_too_large');
  });

  it.each([
    ['an empty string', ''],
    ['one part', 'abc'],
    ['two parts', 'a.b'],
    ['three garbage parts', 'a.b.c'],
    ['four parts', 'a.b.c.d'],
    ['spaces', 'not a token'],
  ])('refuses %s as malformed_token', (_, token) => {
    expectCode(verifier().verify(token, NOW), 'malformed_token');
  });

  it.each([
    ['a header that is not JSON', 'alg=HS256', JSON.stringify(claims())],
    ['a payload that is not JSON', '{"alg":"HS256","typ":"JWT"}', 'user_id=7'],
    ['a JSON array payload', '{"alg":"HS256","typ":"JWT"}', '[{"user_id":7}]'],
    ['a JSON string payload', '{"alg":"HS256","typ":"JWT"}', '"user_id"'],
    ['a JSON number payload', '{"alg":"HS256","typ":"JWT"}', '42'],
    ['a JSON null payload', '{"alg":"HS256","typ":"JWT"}', 'null'],
  ])('refuses a correctly signed token with %s as malformed_token', (_, header, payload) => {
    expectCode(verifier().verify(crafted(header, payload, SECRET), NOW), 'malformed_token');
  });

  it('never echoes the token or the library message in the detail', () => {
    const tokens = [
      crafted('{"alg":"HS256"}', 'user_id=7', SECRET),
      signed(claims(), OTHER_SECRET),
      signed(claims({ exp: NOW - 5 })),
      'a.b.c',
      crafted('{"alg":"none"}', '{}'),
    ];
    for (const token of tokens) {
      const result = verifier().verify(token, NOW);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.detail).not.toContain(token);
      expect(result.detail).not.toMatch(/jwt |Unexpected token|position|malformed/);
    }
  });
});

describe('TokenVerifier remembered tokens', () => {
  it('serves a repeat token from memory: the same frozen payload object', () => {
    const check = verifier();
    const token = signed(claims({ nested: { roles: ['a'] } }));
    const first = check.verify(token, NOW);
    const second = check.verify(token, NOW + 1);
    expectOk(first);
    expect(second).toBe(first);
    expect(first.ok && Object.isFrozen(first.payload)).toBe(true);
    expect(first.ok && Object.isFrozen(first.payload.nested)).toBe(true);
  });

  it('still expires a remembered token, at the same second jsonwebtoken would, tolerance included', () => {
    const exp = NOW + 100;
    const token = signed(claims({ exp }));
    const check = verifier();
    expectOk(check.verify(token, NOW));
    expectOk(check.verify(token, exp - 1));
    expectCode(check.verify(token, exp), 'token_expired');
    expectCode(check.verify(token, exp + 1000), 'token_expired');

    const tolerant = verifier({ clockTolerance: 30 });
    expectOk(tolerant.verify(token, NOW));
    expectOk(tolerant.verify(token, exp + 29));
    expectCode(tolerant.verify(token, exp + 30), 'token_expired');
  });

  it('never remembers a failure: a token not yet active passes once its nbf is reached', () => {
    const check = verifier();
    const token = signed(claims({ nbf: NOW + 60 }));
    expectCode(check.verify(token, NOW), 'token_not_active');
    expectOk(check.verify(token, NOW + 60));
  });

  it('keys on the exact text: a remembered token with another signature is verified, and refused', () => {
    const check = verifier();
    const token = signed(claims());
    expectOk(check.verify(token, NOW));
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${createHmac('sha256', OTHER_SECRET).update(`${header}.${payload}`).digest('base64url')}`;
    expectCode(check.verify(forged, NOW), 'invalid_signature');
    // Trailing characters make another text, not a cache hit.
    expectCode(check.verify(`${token}A`, NOW), 'invalid_signature');
    expectCode(check.verify(`${token}.`, NOW), 'malformed_token');
  });

  it('remembers nothing with verifiedTokenCacheSize: 0', () => {
    const check = verifier({ verifiedTokenCacheSize: 0 });
    const token = signed(claims());
    const first = check.verify(token, NOW);
    const second = check.verify(token, NOW);
    expectOk(first);
    expectOk(second);
    expect(second).not.toBe(first);
  });

  it('is bounded: the oldest token is forgotten first', () => {
    const check = verifier({ verifiedTokenCacheSize: 2 });
    const [a, b, c] = [1, 2, 3].map((id) => signed(claims({ user_id: id })));
    const firstA = check.verify(a, NOW);
    const firstB = check.verify(b, NOW);
    const firstC = check.verify(c, NOW);
    expect(check.verify(c, NOW)).toBe(firstC);
    expect(check.verify(b, NOW)).toBe(firstB);
    const againA = check.verify(a, NOW);
    expectOk(againA, 1);
    expect(againA).not.toBe(firstA);
  });
});
