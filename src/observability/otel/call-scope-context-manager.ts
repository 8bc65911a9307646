/**
 * OpenTelemetry's context manager over the server's call-context storage (governance/call-context.ts): the
 * active trace context rides in the AsyncLocalStorage that already carries each request's call scope, instead of
 * the SDK's default AsyncLocalStorageContextManager, whose storage would be a third one next to the log scope's
 * and the call context's. On Node 20 every async resource a request creates (each promise) copies the store of
 * every AsyncLocalStorage in the process, so a third one is paid on every await (docs/decisions.md C12).
 */
import type { Context, ContextManager } from '@opentelemetry/api';
import { currentTraceContext, runWithTraceContext } from '../../governance/call-context';

/**
 * A context as one entry on its parent's chain: setting a value (each span made current) allocates one object,
 * where the API's own context copies its whole Map and makes three closures (docs/decisions.md C14). The chains
 * stay a few entries long: a request's context holds its span, an attempt's one more.
 */
export class TraceContext implements Context {
  constructor(
    private readonly parent: TraceContext | undefined,
    private readonly key: symbol | undefined,
    private readonly value: unknown,
  ) {}

  getValue(key: symbol): unknown {
    for (let entry: TraceContext | undefined = this; entry !== undefined; entry = entry.parent) {
      if (entry.key === key) return entry.value;
    }
    return undefined;
  }

  setValue(key: symbol, value: unknown): Context {
    return new TraceContext(this, key, value);
  }

  /** An entry whose value is undefined hides the key's older entries: what getValue of a deleted key answers. */
  deleteValue(key: symbol): Context {
    return new TraceContext(this, key, undefined);
  }
}

/** The empty context: what is active outside any, and the parent of a request's extracted context. */
export const ROOT_TRACE_CONTEXT = new TraceContext(undefined, undefined, undefined);

export class CallScopeContextManager implements ContextManager {
  active(): Context {
    return (currentTraceContext() as Context | undefined) ?? ROOT_TRACE_CONTEXT;
  }

  /** `fn` in `context`, without the rest-argument copies of `with`: what tracing's own hooks call. */
  run<R>(context: Context, fn: () => R): R {
    return runWithTraceContext(context, fn);
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return runWithTraceContext(context, args.length === 0 && thisArg == null ? fn : () => fn.apply(thisArg, args));
  }

  /** Functions only: an event emitter comes back unchanged (neither Tollgate nor the SDK parts it loads bind one). */
  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    const bound = function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => (target as (...args: unknown[]) => unknown).apply(this, args));
    };
    return bound as T;
  }

  /** The storage is the server's and always on: nothing to start. */
  enable(): this {
    return this;
  }

  /** Nothing to stop: the API forgets this manager, and a trace context left in the storage is never read again. */
  disable(): this {
    return this;
  }
}
