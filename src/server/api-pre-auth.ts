import { UnauthorizedException } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { applyDenialHeaders, unauthorized } from '../auth/auth-denial';
import { publishAuthDenied } from '../auth/auth-events';
import type { ResolvedAuthOptions } from '../auth/auth-module-options.interface';
import { AUTH_OPTIONS } from '../auth/auth.constants';
import { compileSkipPaths } from '../auth/skip-paths';
import { extractToken } from '../auth/token-extraction';
import type { McpSettings } from '../ai/mcp/mcp-settings';
import type { TollgateConfig } from '../config/config.types';
import { API_CALLER_RESOLVER, API_KEY_PREFIX, ApiAuthGuard, type ApiCallerResolver, bearerOf, bearerTokenMatches } from '../http/api-auth.guard';
import { InvalidKeyError } from '../governance/governance-errors';

/** The API surfaces ApiAuthGuard protects, as path prefixes under `base_path`. */
const API_PREFIXES = ['/v1/', '/openai/v1/', '/anthropic/v1/', '/gemini/v1beta/'];

/**
 * Checks the API credential of `/v1`, `/openai/v1`, `/anthropic/v1` and `/gemini/v1beta` requests in an `onRequest` hook, before a byte of their
 * body is read or parsed: a 20 MiB body of tiny JSON values from a caller without a credential used to become
 * gigabytes of objects before the guard refused it (docs/security.md).
 * - `api.auth: token`: the whole check of ApiAuthGuard (host hook, API key, shared token, admin token), with
 *   its 401 and governance state; the guard then applies only the token's rate limit.
 * - `api.auth: jwt`: AuthModule's guard still decides after parsing, but a body larger than
 *   `server.body_limit` (or of unknown length) is read only for a token AuthModule's verifier accepts (or a
 *   skip path); otherwise the AuthModule's own 401 is sent before the body is read.
 * - `api.auth: none`: nothing to check.
 * MCP over HTTP (`mcp.auth: token`) gets its endpoint's own 401 before its body is read too; its bodies stay
 * within `server.body_limit` whatever the mode. An `onRoute` hook adds the checks to these routes only; it must
 * run before Nest registers its routes.
 */
export function installApiPreAuth(app: NestFastifyApplication, config: TollgateConfig): void {
  const mode = config.ai.api.auth;
  const apiCheck =
    mode === 'none'
      ? undefined
      : mode === 'token'
        ? credentialCheck(app.get(ApiAuthGuard, { strict: false }))
        : largeBodyJwtCheck(app.get<symbol, ResolvedAuthOptions>(AUTH_OPTIONS, { strict: false }), config.server.bodyLimit);
  const mcpCheck =
    config.mcp.enabled && config.mcp.auth === 'token'
      ? mcpTokenCheck(config.mcp, app.get<symbol, ApiCallerResolver | undefined>(API_CALLER_RESOLVER, { strict: false }))
      : undefined;
  const prefixes = API_PREFIXES.map((prefix) => config.server.basePath + prefix);
  const mcpPath = config.server.basePath + config.mcp.path;
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route: RouteOptions) => {
      const check = route.url === mcpPath ? mcpCheck : prefixes.some((prefix) => route.url.startsWith(prefix)) ? apiCheck : undefined;
      if (check) route.onRequest = [...hooksOf(route.onRequest), check];
    });
}

function hooksOf(hooks: RouteOptions['onRequest']): onRequestHookHandler[] {
  if (hooks === undefined) return [];
  return (Array.isArray(hooks) ? hooks : [hooks]) as onRequestHookHandler[];
}

/** ApiAuthGuard's check, synchronous for the shared token or a key looked up moments ago. */
function credentialCheck(guard: ApiAuthGuard): onRequestHookHandler {
  return (request, reply, done) => {
    const refuse = (error: Error) => {
      closeUnlessBodyFits(request, reply);
      done(error);
    };
    let pending: void | Promise<void>;
    try {
      pending = guard.checkBeforeBody(request);
    } catch (error) {
      refuse(error as Error);
      return;
    }
    if (pending) pending.then(() => done(), refuse);
    else done();
  };
}

/** api.auth jwt: a large body is read only for a verified token; its own verifier remembers tokens like the guard's. */
function largeBodyJwtCheck(options: ResolvedAuthOptions, bodyLimit: number): onRequestHookHandler {
  // Required here so that a server without api.auth jwt loads no JWT library (docs/decisions.md C13).
  const { TokenVerifier } = require('../auth/token-verifier') as typeof import('../auth/token-verifier');
  const verifier = new TokenVerifier(options);
  const skipPath = compileSkipPaths(options.skipPaths);
  return (request, reply, done) => {
    if (!mayCarryLargeBody(request, bodyLimit) || skipPath(request.url)) {
      done();
      return;
    }
    const source = extractToken(request.headers, options.tokenCookieName);
    let denial;
    if ('token' in source) {
      const verified = verifier.verify(source.token);
      if (verified.ok) {
        done();
        return;
      }
      denial = unauthorized(options, verified.code, verified.detail, true);
    } else {
      denial = unauthorized(options, source.code, source.detail, false);
    }
    applyDenialHeaders(reply, denial);
    closeUnlessBodyFits(request, reply);
    publishAuthDenied('jwt', denial);
    done(denial);
  };
}

/**
 * MCP's `mcp.auth: token` (the MCP token or an API key), answered as the endpoint answers: 401 as a JSON-RPC
 * error with `WWW-Authenticate: Bearer`. A disallowed Origin is left to the endpoint (403 comes first there),
 * and so is a key store that fails (503); a key looked up here is found again in the authenticator's cache.
 */
function mcpTokenCheck(settings: McpSettings, callers: ApiCallerResolver | undefined): onRequestHookHandler {
  const refused = () => new UnauthorizedException({ message: 'A valid bearer token is required', tollgate: true });
  return (request, reply, done) => {
    const origin = request.headers.origin;
    const token = bearerOf(request.headers.authorization);
    if ((origin !== undefined && !settings.allowedOrigins.includes(origin.toLowerCase())) || bearerTokenMatches(request.headers.authorization, settings.token)) {
      done();
      return;
    }
    const refuse = () => {
      closeUnlessBodyFits(request, reply);
      done(refused());
    };
    if (!callers || token === undefined || !token.startsWith(API_KEY_PREFIX)) {
      refuse();
      return;
    }
    const state = callers.authenticateKey(token);
    if (!(state instanceof Promise)) {
      done();
      return;
    }
    state.then(
      () => done(),
      (error: unknown) => (error instanceof InvalidKeyError ? refuse() : done()),
    );
  };
}

/** A body over `bodyLimit` may follow: a larger Content-Length, or a chunked body of unknown length. */
function mayCarryLargeBody(request: FastifyRequest, bodyLimit: number): boolean {
  const length = request.headers['content-length'];
  return length === undefined ? request.headers['transfer-encoding'] !== undefined : Number(length) > bodyLimit;
}

/**
 * A refused request's body is read and dropped by Node after the 401 (nothing of it is kept), so the client,
 * which may write its whole body before it reads, gets the answer rather than a reset; but only up to the
 * route's body limit: a longer body, or one of unknown length, closes the connection, as Fastify does after a 413.
 */
function closeUnlessBodyFits(request: FastifyRequest, reply: FastifyReply): void {
  const length = request.headers['content-length'];
  const fits = length === undefined ? request.headers['transfer-encoding'] === undefined : Number(length) <= request.routeOptions.bodyLimit;
  if (!fits) reply.header('connection', 'close');
}
