import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { destination as pinoDestination, type DestinationStream, type Level } from 'pino';
import { requestIdFor } from '../ai/http/request-id';
import type { TollgateConfig } from '../config/config.types';

/** The `logs:` section as written in YAML. */
export interface LogsSection {
  /** One access line per completed request (default true). */
  requests?: boolean;
}

/**
 * Where the server's JSON log lines go: stdout by default; `false` silences them (tests). `requests: false`
 * drops the per-request access line.
 */
export type LogOutput = false | { level?: Level; destination?: DestinationStream; requests?: boolean };

/**
 * info, or debug when the AuthModule's debug mode is on (its decision lines are debug lines), as it is by
 * default under NODE_ENV=development.
 */
export function defaultLogLevel(config: TollgateConfig, env: NodeJS.ProcessEnv = process.env): Level {
  return (config.auth?.debugMode ?? env.NODE_ENV === 'development') && config.auth ? 'debug' : 'info';
}

/** Header names whose values are credentials: Authorization, cookies, API keys and tokens of any spelling. */
const SECRET_HEADER = /authorization|cookie|api[-_]?key|token|secret|password|session/i;
export const REDACTED = '[redacted]';

export function redactHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> {
  const safe: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers ?? {})) safe[name] = SECRET_HEADER.test(name) ? REDACTED : value;
  return safe;
}

/** The fields pino-http's standard request serializer produced; the query string is left out (it can carry keys). */
interface SerializedRequest {
  method?: string;
  url?: string;
  headers?: Record<string, unknown>;
  remoteAddress?: string;
}

function serializeRequest(request: SerializedRequest) {
  return {
    method: request.method,
    path: request.url?.split('?')[0],
    headers: redactHeaders(request.headers),
    remote_address: request.remoteAddress,
  };
}

function serializeResponse(response: { statusCode?: number; headers?: Record<string, unknown> }) {
  return { status: response.statusCode, headers: redactHeaders(response.headers) };
}

/**
 * nestjs-pino settings: one JSON line per event, each bound to the request's id (`request_id`, the same
 * value as the x-request-id header, which Fastify assigned and @fastify/middie copied onto the raw request).
 * Bodies are never logged; secret headers are replaced by serializers, and the redact paths catch the same
 * credentials wherever else a log call might place them.
 */
export function loggerParams(output: LogOutput = {}): Params {
  const options = {
    level: output === false ? 'silent' : (output.level ?? 'info'),
    genReqId: (request: IncomingMessage) => (request as IncomingMessage & { id?: string }).id ?? requestIdFor(request.headers['x-request-id']),
    customAttributeKeys: { reqId: 'request_id' },
    // Child loggers carry only the id; the request itself is logged once, on its completion line.
    quietReqLogger: true,
    autoLogging: output !== false && output.requests !== false,
    serializers: { req: serializeRequest, res: serializeResponse },
    redact: {
      paths: ['authorization', 'cookie', 'token', 'api_key', 'apiKey', 'password', 'secret', '*.authorization', '*.cookie', '*.token', '*.api_key', '*.apiKey', '*.password', '*.secret'],
      censor: REDACTED,
    },
    customSuccessMessage: (request: IncomingMessage, response: ServerResponse) => `${request.method} ${response.statusCode}`,
    customErrorMessage: (request: IncomingMessage, response: ServerResponse) => `${request.method} ${response.statusCode}`,
  };
  if (output === false) return { pinoHttp: options };
  // Asynchronous stdout: lines written while a write is in flight leave together instead of one blocking
  // write per line; pino flushes what is buffered when the process exits.
  return { pinoHttp: [options, output.destination ?? pinoDestination({ dest: 1, sync: false })] };
}
