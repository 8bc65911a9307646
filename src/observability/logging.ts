import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import pino, { destination as pinoDestination, type DestinationStream, type Level, type Logger as Pino } from 'pino';
import type { TollgateConfig } from '../config/config.types';

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

// Header names repeat from request to request: the regular expression runs once per name (a bounded memo,
// since a client chooses its header names).
const secretHeaderNames = new Map<string, boolean>();
const SECRET_HEADER_MEMO_LIMIT = 1000;

function isSecretHeader(name: string): boolean {
  let secret = secretHeaderNames.get(name);
  if (secret === undefined) {
    secret = SECRET_HEADER.test(name);
    if (secretHeaderNames.size < SECRET_HEADER_MEMO_LIMIT) secretHeaderNames.set(name, secret);
  }
  return secret;
}

export function redactHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> {
  const safe: Record<string, unknown> = {};
  for (const name in headers) safe[name] = isSecretHeader(name) ? REDACTED : headers[name];
  return safe;
}

/** Field names pino's `redact` blanks at the top level and one level down of any line but the access line. */
const REDACT_PATHS = ['authorization', 'cookie', 'token', 'api_key', 'apiKey', 'password', 'secret'];

const MIN_WRITE_BYTES = 4096;
const MAX_BUFFERED_MS = 100;

/** The id of the request whose work is running, for every line logged on its behalf. */
const requestScope = new AsyncLocalStorage<string>();

/** What a Fastify instance offers the request logging: hooks, as in Fastify's own typings. */
export interface LoggingHookHost {
  addHook(name: 'onRequest', hook: (request: { id: string }, reply: unknown, done: () => void) => void): unknown;
  addHook(
    name: 'onResponse',
    hook: (
      request: { id: string; method: string; url: string; headers: Record<string, unknown>; raw: IncomingMessage },
      reply: { statusCode: number; elapsedTime: number; getHeaders(): Record<string, unknown> },
      done: () => void,
    ) => void,
  ): unknown;
}

/**
 * The HTTP server's JSON logs: one pino logger behind Nest's `Logger` (every line written while a request
 * runs carries its `request_id`, from an AsyncLocalStorage entered in an onRequest hook, through pino's
 * mixin: no per-request child logger), and one access line per request written from an onResponse hook.
 * The access line is assembled from already-redacted parts, so it skips pino's `redact`; every other line
 * goes through it.
 */
export class ServerLogging {
  readonly logger: LoggerService;
  private readonly access?: Pino;

  constructor(output: Exclude<LogOutput, false>) {
    // Asynchronous, buffered stdout: lines leave in writes of at least 4 KiB, or after at most 100 ms when
    // traffic is light, instead of one write per line; pino flushes what is buffered when the process exits.
    const destination =
      output.destination ?? pinoDestination({ dest: 1, sync: false, minLength: MIN_WRITE_BYTES, periodicFlush: MAX_BUFFERED_MS });
    const level = output.level ?? 'info';
    const root = pino(
      {
        level,
        mixin: () => {
          const id = requestScope.getStore();
          return id === undefined ? {} : { request_id: id };
        },
        redact: { paths: [...REDACT_PATHS, ...REDACT_PATHS.map((path) => `*.${path}`)], censor: REDACTED },
      },
      destination,
    );
    this.logger = new NestPinoLogger(root);
    if (output.requests !== false) this.access = pino({ level }, destination);
  }

  /** Enters the request's scope before anything else runs for it, and writes its access line once answered. */
  install(fastify: LoggingHookHost): void {
    fastify.addHook('onRequest', (request, _reply, done) => requestScope.run(request.id, done));
    const access = this.access;
    if (!access) return;
    fastify.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      const line = {
        request_id: request.id,
        req: {
          method: request.method,
          path: pathOf(request.url),
          headers: redactHeaders(request.headers),
          remote_address: request.raw.socket?.remoteAddress,
        },
        res: { status, headers: redactHeaders(reply.getHeaders()) },
        responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
      };
      if (status >= 500) access.error(line, `${request.method} ${status}`);
      else access.info(line, `${request.method} ${status}`);
      done();
    });
  }
}

/** The query string is left out: it can carry keys. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

const STACK = /\n\s*at /;

type NestLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's `LoggerService` over pino, with nestjs-pino's conventions: the last optional parameter is the
 * context (`context` on the line), an object message is merged into the line, an Error becomes `err`, and
 * Nest's `error(message, stack, context)` becomes an `err` with that stack.
 */
class NestPinoLogger implements LoggerService {
  constructor(private readonly pino: Pino) {}

  log(message: unknown, ...optional: unknown[]): void {
    this.call('info', message, optional);
  }
  error(message: unknown, ...optional: unknown[]): void {
    this.call('error', message, optional);
  }
  warn(message: unknown, ...optional: unknown[]): void {
    this.call('warn', message, optional);
  }
  debug(message: unknown, ...optional: unknown[]): void {
    this.call('debug', message, optional);
  }
  verbose(message: unknown, ...optional: unknown[]): void {
    this.call('trace', message, optional);
  }
  fatal(message: unknown, ...optional: unknown[]): void {
    this.call('fatal', message, optional);
  }

  private call(level: NestLevel, message: unknown, optional: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    let params = optional;
    if (optional.length > 0) {
      fields.context = optional[optional.length - 1];
      params = optional.slice(0, -1);
    }
    if (message instanceof Error) {
      fields.err = message;
      this.pino[level](fields, ...(params as []));
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level](Object.assign(fields, message), ...(params as []));
    } else if (level === 'error' && params.length === 1 && typeof params[0] === 'string' && STACK.test(params[0])) {
      // Nest's exception handler calls error(message, stack, context).
      const err = new Error(String(message));
      err.stack = params[0];
      this.pino.error({ ...fields, err });
    } else {
      this.pino[level](fields, String(message), ...(params as []));
    }
  }
}
