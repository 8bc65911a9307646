/**
 * Who a model call is made for, carried from the HTTP layer (or a CLI command, or a test) down to the
 * AiClient's call gate and the ledger's model-call sink without threading it through every signature.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type GovernanceIdentity, type GovernanceRequestState, governanceOf } from './governance-identity';

export interface CallContext {
  identity: GovernanceIdentity;
  /** The request's id (the x-request-id Tollgate answers with), when there is a request. */
  requestId?: string;
  /** The route template or path that made the call, e.g. `/v1/generate`. */
  route?: string;
  /** The whole state (an API key's record included), for the allow-lists and budgets of the call gate. */
  state?: GovernanceRequestState;
  /** The request itself, whose JWT claims may carry the caller's own budget. */
  request?: object;
  /** Sets a header of the request's answer (the call gate's X-Budget-Max-Tokens); absent without an HTTP answer. */
  setResponseHeader?: (name: string, value: string) => void;
}

interface ReplyLike {
  header(name: string, value: string): unknown;
}

interface RequestLike {
  id: unknown;
  routeOptions?: { url?: string };
}

/**
 * An HTTP request's scope, entered before the API auth layer has identified the caller: the context is read
 * from the request when a model call first asks for it, by then the guard has left the governance state.
 */
class RequestScope {
  private context?: CallContext;

  constructor(
    private readonly request: RequestLike,
    private readonly reply: ReplyLike,
  ) {}

  current(): CallContext | undefined {
    if (this.context) return this.context;
    const state = governanceOf(this.request);
    if (state) this.context = requestCallContext(this.request, state, this.reply);
    return this.context;
  }
}

/**
 * What the storage holds: the call's context (an HTTP request's, resolved when first asked for) and the trace
 * context, which tracing keeps in this same storage (otel/call-scope-context-manager.ts) rather than in an
 * AsyncLocalStorage of its own: on Node 20 every async resource, each promise included, copies the store of every
 * AsyncLocalStorage in the process (docs/decisions.md C12). Opaque here: governance imports nothing of tracing.
 */
class Scope {
  constructor(
    readonly call: CallContext | RequestScope | undefined,
    readonly trace: unknown,
  ) {}
}

const storage = new AsyncLocalStorage<Scope>();

/** Runs `fn` with `context` visible to every model call it makes, streams included; the trace context stays. */
export function runWithCallContext<T>(context: CallContext, fn: () => T): T {
  return storage.run(new Scope(context, storage.getStore()?.trace), fn);
}

export function currentCallContext(): CallContext | undefined {
  const call = storage.getStore()?.call;
  return call instanceof RequestScope ? call.current() : call;
}

/** The trace context current here (what tracing's context manager last entered), undefined outside any. */
export function currentTraceContext(): unknown {
  return storage.getStore()?.trace;
}

/** Runs `fn` with `trace` as the current trace context; the call context stays. */
export function runWithTraceContext<R>(trace: unknown, fn: () => R): R {
  return storage.run(new Scope(storage.getStore()?.call, trace), fn);
}

/** The call context of an HTTP request the API auth layer identified; with its reply, the gate can set headers of the answer. */
export function requestCallContext(request: RequestLike, state: GovernanceRequestState, reply?: ReplyLike): CallContext {
  return {
    identity: state.identity,
    requestId: String(request.id),
    route: request.routeOptions?.url,
    state,
    request,
    ...(reply ? { setResponseHeader: (name: string, value: string) => void reply.header(name, value) } : {}),
  };
}

interface HookHost {
  addHook(name: 'onRequest', hook: (request: RequestLike, reply: ReplyLike, done: () => void) => void): unknown;
}

/**
 * Gives every request of a Fastify server its call scope, from its first hook on (the way the log scope is
 * entered): cheaper than a Nest interceptor, whose presence puts every handler through rxjs and an
 * AsyncResource bind (about 60 µs per request on the development machine).
 */
export function installCallContextHook(fastify: HookHost): void {
  // The trace context stays: tracing's hook may have entered the request's server span before this one.
  fastify.addHook('onRequest', (request, reply, done) => storage.run(new Scope(new RequestScope(request, reply), storage.getStore()?.trace), done));
}
