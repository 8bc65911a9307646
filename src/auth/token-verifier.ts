import { JsonWebTokenError, JwtService, NotBeforeError, TokenExpiredError } from '@nestjs/jwt';
import type { DenialCode } from './auth-denial';
import type { JwtPayload, ResolvedAuthOptions } from './auth-module-options.interface';

export type VerifyResult = { ok: true; payload: JwtPayload } | { ok: false; code: DenialCode; detail: string };

type VerifierOptions = Pick<
  ResolvedAuthOptions,
  | 'jwtAlgorithm'
  | 'verificationKey'
  | 'clockTolerance'
  | 'requireExp'
  | 'issuer'
  | 'audience'
  | 'maxTokenBytes'
  | 'verifiedTokenCacheSize'
>;

/** A payload that verified; only its time claims are checked again on later requests. */
interface VerifiedToken {
  result: { ok: true; payload: JwtPayload };
  exp?: number;
  nbf?: number;
}

/** jsonwebtoken's messages for a token that is not a well-formed JWS. */
const MALFORMED = new Set(['jwt malformed', 'invalid token', 'jwt signature is required', 'jwt must be provided']);

/**
 * Header parameters registered by JWS, JWE and JWA (RFC 7515, 7516, 7518): a `crit` list must not name them
 * (RFC 7515 §4.1.11), they are not extensions.
 */
const REGISTERED_HEADER_PARAMETERS = new Set([
  'alg', 'jku', 'jwk', 'kid', 'x5u', 'x5c', 'x5t', 'x5t#S256', 'typ', 'cty', 'crit',
  'enc', 'zip', 'epk', 'apu', 'apv', 'iv', 'tag', 'p2s', 'p2c',
]);

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * One verifier per configured key (docs/decisions.md A2): the KeyObject is built once at start, and only the
 * configured algorithm verifies, so `alg: none` or an HS token against an RS key never get through. The
 * header is read before the signature is checked: another algorithm is `invalid_algorithm` whether or not
 * the token carries a signature, and a `crit` header is refused, since Tollgate understands no extension.
 *
 * Tokens that verified are remembered (bounded, oldest first out) by their exact text, signature
 * included, so a client's next request skips the signature check while exp/nbf are still checked
 * against the clock. Failures are never remembered. Remembered payloads are frozen: every request that
 * presents the token shares the object.
 */
export class TokenVerifier {
  private readonly jwt: JwtService;
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(private readonly options: VerifierOptions) {
    this.jwt = new JwtService({
      publicKey: options.verificationKey as never,
      verifyOptions: {
        algorithms: [options.jwtAlgorithm],
        clockTolerance: options.clockTolerance,
        issuer: options.issuer as string | [string, ...string[]] | undefined,
        audience: options.audience as string | [string, ...string[]] | undefined,
      },
    });
  }

  verify(token: string, nowSeconds = Math.floor(Date.now() / 1000)): VerifyResult {
    // Tokens are base64url (ASCII): characters are bytes, and nothing this long is decoded.
    if (token.length > this.options.maxTokenBytes) {
      return { ok: false, code: 'token_too_large', detail: `the token is longer than ${this.options.maxTokenBytes} bytes` };
    }
    const known = this.verified.get(token);
    if (known) return this.timeFailure(known.exp, known.nbf, nowSeconds) ?? known.result;

    const headerFailure = this.headerFailure(token);
    if (headerFailure) return headerFailure;
    let payload: unknown;
    try {
      payload = this.jwt.verify(token, { clockTimestamp: nowSeconds } as never);
    } catch (error) {
      return classify(error);
    }
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      return { ok: false, code: 'malformed_token', detail: 'the token payload is not a JSON object' };
    }
    const claims = payload as JwtPayload;
    if (claims.exp === undefined && this.options.requireExp) {
      return { ok: false, code: 'invalid_claims', detail: 'the token has no exp claim' };
    }
    if (claims.iat !== undefined) {
      if (typeof claims.iat !== 'number') return { ok: false, code: 'invalid_claims', detail: 'the iat claim is not a number' };
      if (claims.iat > nowSeconds + this.options.clockTolerance) {
        return { ok: false, code: 'token_not_active', detail: 'the token was issued in the future (iat)' };
      }
    }
    const result = { ok: true as const, payload: deepFreeze(claims) };
    this.remember(token, { result, exp: claims.exp as number | undefined, nbf: claims.nbf as number | undefined });
    return result;
  }

  /** The JOSE header's own checks, made before any signature work; only tokens not remembered get here. */
  private headerFailure(token: string): VerifyResult | undefined {
    const header = decodeHeader(token);
    if (!header) return { ok: false, code: 'malformed_token', detail: 'the token header cannot be decoded' };
    if (header.alg !== this.options.jwtAlgorithm) {
      return { ok: false, code: 'invalid_algorithm', detail: 'the token is signed with another algorithm than the configured one' };
    }
    if (header.crit !== undefined) return { ok: false, code: 'malformed_token', detail: critProblem(header) };
    return undefined;
  }

  /** jsonwebtoken's own rules for a token verified earlier: expired at exp + tolerance, active from nbf - tolerance. */
  private timeFailure(exp: number | undefined, nbf: number | undefined, nowSeconds: number): VerifyResult | undefined {
    const tolerance = this.options.clockTolerance;
    if (exp !== undefined && nowSeconds >= exp + tolerance) return { ok: false, code: 'token_expired', detail: 'the token has expired' };
    if (nbf !== undefined && nbf > nowSeconds + tolerance) return { ok: false, code: 'token_not_active', detail: 'the token is not valid yet (nbf)' };
    return undefined;
  }

  private remember(token: string, entry: VerifiedToken): void {
    const limit = this.options.verifiedTokenCacheSize;
    if (limit === 0) return;
    if (this.verified.size >= limit) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, entry);
  }
}

function classify(error: unknown): VerifyResult {
  if (error instanceof TokenExpiredError) return { ok: false, code: 'token_expired', detail: 'the token has expired' };
  if (error instanceof NotBeforeError) return { ok: false, code: 'token_not_active', detail: 'the token is not valid yet (nbf)' };
  const message = error instanceof JsonWebTokenError ? error.message : '';
  if (message === 'invalid signature') return { ok: false, code: 'invalid_signature', detail: 'the signature does not verify' };
  if (message.startsWith('jwt issuer invalid')) return { ok: false, code: 'invalid_issuer', detail: 'the issuer (iss) is not accepted' };
  if (message.startsWith('jwt audience invalid')) return { ok: false, code: 'invalid_audience', detail: 'the audience (aud) is not accepted' };
  if (message === 'invalid exp value' || message === 'invalid nbf value') {
    return { ok: false, code: 'invalid_claims', detail: `the ${message.slice(8, 11)} claim is not a number` };
  }
  if (MALFORMED.has(message)) return { ok: false, code: 'malformed_token', detail: 'the token is not a well-formed JWT' };
  // Parse errors of the header or payload JSON, key/algorithm mismatches: never echo the library's text.
  return { ok: false, code: 'malformed_token', detail: 'the token cannot be decoded' };
}

/** The first part of a compact JWS as a JSON object, or undefined when it is not one. */
function decodeHeader(token: string): Record<string, unknown> | undefined {
  const end = token.indexOf('.');
  if (end <= 0) return undefined;
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, end), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header) ? (header as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why a `crit` header is refused (RFC 7515 §4.1.11). Its names are not echoed: they are the sender's text.
 * Even a well-formed list names an extension Tollgate does not implement, so every `crit` is refused.
 */
function critProblem(header: Record<string, unknown>): string {
  const names = header.crit;
  if (!Array.isArray(names) || names.length === 0 || names.some((name) => typeof name !== 'string')) {
    return 'the crit header is not a non-empty list of header parameter names';
  }
  if (new Set(names).size !== names.length) return 'the crit header names a parameter twice';
  if (names.some((name: string) => REGISTERED_HEADER_PARAMETERS.has(name))) return 'the crit header names a registered header parameter';
  if (names.some((name: string) => !Object.hasOwn(header, name))) return 'the crit header names a parameter the header does not carry';
  return 'the token requires a header extension (crit) that Tollgate does not understand';
}
