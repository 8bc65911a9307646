import { HttpException } from '@nestjs/common';
import type { ResolvedAuthOptions } from './auth-module-options.interface';

/** Machine-readable reasons carried as `code` in 400/401/403 bodies (docs/decisions.md A6). */
export type DenialCode =
  | 'missing_token'
  | 'invalid_authorization_header'
  | 'token_too_large'
  | 'malformed_token'
  | 'invalid_algorithm'
  | 'invalid_signature'
  | 'token_expired'
  | 'token_not_active'
  | 'invalid_issuer'
  | 'invalid_audience'
  | 'invalid_claims'
  | 'subdomain_mismatch'
  | 'invalid_path'
  | 'slug_denied'
  | 'tenant_mismatch'
  | 'custom_validation_failed'
  | 'rbac_denied'
  | 'rbac_unavailable';

export interface DenialHeaders {
  [name: string]: string;
}

/**
 * The one exception both guards throw to answer 400, 401 or 403. The guard writes `headers` on the reply
 * (`applyDenialHeaders`) before throwing, so they survive whichever exception filter the host uses.
 */
export class AuthDeniedException extends HttpException {
  constructor(
    status: 400 | 401 | 403,
    readonly code: DenialCode,
    body: Record<string, unknown>,
    readonly headers: DenialHeaders,
    /** Human reason: logged, and added to the body only in debug mode. */
    readonly detail: string,
  ) {
    super(body, status);
  }
}

export function unauthorized(
  options: ResolvedAuthOptions,
  code: DenialCode,
  detail: string,
  tokenPresented: boolean,
): AuthDeniedException {
  const headers: DenialHeaders = {
    'www-authenticate': tokenPresented ? 'Bearer error="invalid_token"' : 'Bearer',
    'cache-control': 'no-store',
  };
  return new AuthDeniedException(401, code, denialBody(options.unauthorizedResponse, options, code, detail), headers, detail);
}

/** The body of a 400: no response option configures it, as it is not an access decision. */
const BAD_REQUEST_BODY: Record<string, unknown> = Object.freeze({ error: 'Bad request', status: 400 });

/** A request the guards refuse to judge at all (a path the router would read differently). */
export function badRequest(options: ResolvedAuthOptions, code: DenialCode, detail: string): AuthDeniedException {
  return new AuthDeniedException(400, code, denialBody(BAD_REQUEST_BODY, options, code, detail), { 'cache-control': 'no-store' }, detail);
}

export function forbidden(options: ResolvedAuthOptions, code: DenialCode, detail: string): AuthDeniedException {
  return new AuthDeniedException(
    403,
    code,
    denialBody(options.forbiddenResponse, options, code, detail),
    { 'cache-control': 'no-store' },
    detail,
  );
}

function denialBody(
  configured: Record<string, unknown>,
  options: ResolvedAuthOptions,
  code: DenialCode,
  detail: string,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...configured };
  if (options.responseCodes) body.code = code;
  if (options.debugMode) body.detail = detail;
  return body;
}

/** Works for Fastify's reply (`header`) and Node's ServerResponse (`setHeader`). */
export function applyDenialHeaders(reply: unknown, denial: AuthDeniedException): void {
  const target = reply as { header?: (n: string, v: string) => unknown; setHeader?: (n: string, v: string) => unknown };
  for (const [name, value] of Object.entries(denial.headers)) {
    if (typeof target.header === 'function') target.header(name, value);
    else if (typeof target.setHeader === 'function') target.setHeader(name, value);
  }
}
