/**
 * OpenTelemetry's context manager over the server's call-context storage (governance/call-context.ts): the
 * active trace context rides in the AsyncLocalStorage that already carries each request's call scope, instead of
 * the SDK's default AsyncLocalStorageContextManager, whose storage would be a third one next to the log scope's
 * and the call context's. On Node 20 every async resource a request creates (each promise) copies the store of
 * every AsyncLocalStorage in the process, so a third one is paid on every await (docs/decisions.md C12).
 */
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';
import { currentTraceContext, runWithTraceContext } from '../../governance/call-context';

export class CallScopeContextManager implements ContextManager {
  active(): Context {
    return (currentTraceContext() as Context | undefined) ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return runWithTraceContext(context, thisArg == null ? fn : fn.bind(thisArg), ...args);
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
