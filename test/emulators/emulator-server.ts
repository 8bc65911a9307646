/**
 * Scriptable loopback HTTP server that provider emulators build on: each emulator registers its routes,
 * and tests script faults per request (status, delay, 429 with Retry-After, malformed JSON, connection
 * reset), then read the request log to assert what an adapter actually sent.
 */
import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface EmulatorRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  body: unknown;
  /** Named groups of a RegExp route. */
  params: Record<string, string>;
}

export interface EmulatorReply {
  status?: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON; strings are sent verbatim. */
  body?: unknown;
  /** Streamed bodies: written one by one, `chunkDelayMs` apart (bytes for binary framings such as AWS event streams). */
  chunks?: Array<string | Buffer>;
  chunkDelayMs?: number;
}

export type EmulatorHandler = (request: EmulatorRequest) => EmulatorReply | Promise<EmulatorReply>;

export type Fault =
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Waits, then serves normally (or never, when `ms` is Infinity, until the client goes away). */
  | { kind: 'delay'; ms: number }
  /** A 200 whose body is not JSON. */
  | { kind: 'malformed'; status?: number; contentType?: string }
  /** Destroys the socket without answering. */
  | { kind: 'reset' }
  /**
   * Shapes a streamed reply: a pause before each chunk after the first; a cut connection after `cutAfter`
   * chunks; or, after `stallAfter` chunks, silence with the connection open until the client goes away.
   */
  | { kind: 'stream'; chunkDelayMs?: number; cutAfter?: number; stallAfter?: number };

export interface LoggedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
  rawBody: string;
  /** Client port; equal ports on consecutive requests mean a reused keep-alive socket. */
  remotePort?: number;
  /** Set when the client disconnected before the response finished. */
  aborted: boolean;
}

interface Route {
  method: string;
  path: string | RegExp;
  handler: EmulatorHandler;
}

interface ScriptedFault {
  fault: Fault;
  remaining: number;
  path?: string | RegExp;
}

export class EmulatorServer {
  readonly requests: LoggedRequest[] = [];
  /** Why the emulator itself failed a request (answered 500 'emulator failure'), for a test's failure message. */
  readonly failures: string[] = [];
  private readonly routes: Route[] = [];
  private faults: ScriptedFault[] = [];
  private randomFaults: Array<{ fault: Fault; probability: number }> = [];
  /** How many requests met each random fault, by kind. */
  readonly randomFaultsMet: Partial<Record<Fault['kind'], number>> = {};
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly abortWaiters: Array<() => void> = [];
  private port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        this.failures.push(`${req.method} ${req.url}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        if (!res.headersSent) this.send(res, { status: 500, body: { error: 'emulator failure' } });
        else res.destroy();
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  route(method: string, path: string | RegExp, handler: EmulatorHandler): this {
    this.routes.push({ method: method.toUpperCase(), path, handler });
    return this;
  }

  /** Applies `fault` to the next `times` requests (optionally only those matching `path`). */
  inject(fault: Fault, times = 1, path?: string | RegExp): this {
    this.faults.push({ fault, remaining: times, path });
    return this;
  }

  failNext(status: number, options: { times?: number; body?: unknown; headers?: Record<string, string> } = {}): this {
    return this.inject({ kind: 'status', status, body: options.body, headers: options.headers }, options.times ?? 1);
  }

  rateLimitNext(retryAfter: string, options: { times?: number; body?: unknown; headers?: Record<string, string> } = {}): this {
    return this.inject(
      { kind: 'status', status: 429, body: options.body, headers: { 'retry-after': retryAfter, ...options.headers } },
      options.times ?? 1,
    );
  }

  /** `path`: only requests to it are delayed, so a health probe arriving first does not take the delay. */
  delayNext(ms: number, times = 1, path?: string | RegExp): this {
    return this.inject({ kind: 'delay', ms }, times, path);
  }

  malformedNext(times = 1): this {
    return this.inject({ kind: 'malformed' }, times);
  }

  resetNext(times = 1): this {
    return this.inject({ kind: 'reset' }, times);
  }

  /**
   * From now on, each request meets at most one of these faults, each with its own probability (their sum
   * at most 1); scripted faults still come first. For load runs, where a count-based script cannot say
   * which of many concurrent requests fails.
   */
  faultRandomly(faults: Array<{ fault: Fault; probability: number }>): this {
    this.randomFaults = faults;
    return this;
  }

  /** Clears scripted faults and the request log between tests. */
  reset(): void {
    this.faults = [];
    this.randomFaults = [];
    this.requests.length = 0;
  }

  requestsTo(path: string): LoggedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  get lastRequest(): LoggedRequest | undefined {
    return this.requests[this.requests.length - 1];
  }

  /** Resolves once a client disconnects before its response finished (e.g. a caller abort or timeout). */
  waitForAbort(): Promise<void> {
    if (this.requests.some((r) => r.aborted)) return Promise.resolve();
    return new Promise((resolve) => this.abortWaiters.push(resolve));
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://emulator');
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: tryParse(rawBody),
      rawBody,
      remotePort: req.socket.remotePort,
      aborted: false,
    };
    this.requests.push(entry);

    const fault = this.takeFault(entry.path);
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    // Registered after a scripted reset so only client-side disconnects count as aborts.
    let cutByServer = false;
    res.on('close', () => {
      if (!res.writableFinished && !cutByServer) {
        entry.aborted = true;
        this.abortWaiters.splice(0).forEach((resolve) => resolve());
      }
    });
    if (fault?.kind === 'status') {
      this.send(res, { status: fault.status, headers: fault.headers, body: fault.body ?? { error: 'scripted failure' } });
      return;
    }
    if (fault?.kind === 'malformed') {
      res.writeHead(fault.status ?? 200, { 'content-type': fault.contentType ?? 'application/json' });
      res.end('{"id": "truncated", "choices": [');
      return;
    }
    if (fault?.kind === 'delay') {
      if (!(await this.sleep(fault.ms, res))) return;
    }

    const match = this.match(entry.method, entry.path);
    if (!match) {
      this.send(res, { status: 404, body: { error: 'no such route' } });
      return;
    }
    const reply = await match.route.handler({
      method: entry.method,
      path: entry.path,
      query: entry.query,
      headers: entry.headers,
      rawBody,
      body: entry.body,
      params: match.params,
    });
    if (reply.chunks) {
      await this.sendChunks(res, fault?.kind === 'stream' ? shapeStream(reply, fault) : reply, () => {
        cutByServer = true;
      });
    } else this.send(res, reply);
  }

  private takeFault(path: string): Fault | undefined {
    const scripted = this.faults.find((f) => f.remaining > 0 && (f.path === undefined || matches(f.path, path)));
    if (!scripted) return this.randomFault();
    scripted.remaining -= 1;
    return scripted.fault;
  }

  private randomFault(): Fault | undefined {
    if (this.randomFaults.length === 0) return undefined;
    let draw = Math.random();
    for (const { fault, probability } of this.randomFaults) {
      if (draw < probability) {
        this.randomFaultsMet[fault.kind] = (this.randomFaultsMet[fault.kind] ?? 0) + 1;
        return fault;
      }
      draw -= probability;
    }
    return undefined;
  }

  private match(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      if (typeof route.path === 'string') {
        if (route.path === path) return { route, params: {} };
      } else {
        const found = route.path.exec(path);
        if (found) return { route, params: { ...found.groups } };
      }
    }
    return undefined;
  }

  /** Resolves false when the client went away first (no point answering). */
  private sleep(ms: number, res: ServerResponse): Promise<boolean> {
    return new Promise((resolve) => {
      const onClose = () => {
        if (timer) {
          clearTimeout(timer);
          this.timers.delete(timer);
        }
        resolve(false);
      };
      res.once('close', onClose);
      const timer = Number.isFinite(ms)
        ? setTimeout(() => {
            this.timers.delete(timer!);
            res.off('close', onClose);
            resolve(true);
          }, ms)
        : undefined;
      if (timer) this.timers.add(timer);
    });
  }

  private send(res: ServerResponse, reply: EmulatorReply): void {
    const isText = typeof reply.body === 'string';
    const payload = reply.body === undefined ? '' : isText ? (reply.body as string) : JSON.stringify(reply.body);
    res.writeHead(reply.status ?? 200, {
      'content-type': isText ? 'text/plain' : 'application/json',
      ...reply.headers,
    });
    res.end(payload);
  }

  private async sendChunks(res: ServerResponse, reply: ShapedStream, onCut: () => void): Promise<void> {
    res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', ...reply.headers });
    const chunks = reply.chunks ?? [];
    for (const [index, chunk] of chunks.entries()) {
      if (res.destroyed) return;
      if (index === reply.cutAfter) {
        // A mid-stream failure as the client sees it: the connection drops without the stream's end.
        onCut();
        res.socket?.destroy();
        return;
      }
      if (index === reply.stallAfter) {
        await this.sleep(Infinity, res);
        return;
      }
      // Flushed before a cut, so the client really holds those chunks when the connection drops.
      if (reply.cutAfter === undefined) res.write(chunk);
      else await new Promise<void>((resolve) => res.write(chunk, () => resolve()));
      if (index < chunks.length - 1 && reply.chunkDelayMs && !(await this.sleep(reply.chunkDelayMs, res))) return;
    }
    res.end();
  }
}

type ShapedStream = EmulatorReply & { cutAfter?: number; stallAfter?: number };

function shapeStream(reply: EmulatorReply, fault: { chunkDelayMs?: number; cutAfter?: number; stallAfter?: number }): ShapedStream {
  return { ...reply, chunkDelayMs: fault.chunkDelayMs ?? reply.chunkDelayMs, cutAfter: fault.cutAfter, stallAfter: fault.stallAfter };
}

/** Starts an emulator on an ephemeral loopback port. */
export async function startEmulator(): Promise<EmulatorServer> {
  return new EmulatorServer().listen();
}

function matches(pattern: string | RegExp, path: string): boolean {
  return typeof pattern === 'string' ? pattern === path : pattern.test(path);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function tryParse(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
