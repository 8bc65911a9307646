/**
 * Who a model call is made for, carried from the HTTP layer (or a CLI command, or a test) down to the
 * ledger's model-call sink without threading it through every AiClient signature.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { GovernanceIdentity, GovernanceRequestState } from './governance-identity';

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
}

const storage = new AsyncLocalStorage<CallContext>();

/** Runs `fn` with `context` visible to every model call it makes, streams included. */
export function runWithCallContext<T>(context: CallContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentCallContext(): CallContext | undefined {
  return storage.getStore();
}

/** The call context of an HTTP request the API auth layer identified. */
export function requestCallContext(request: { id: unknown; routeOptions?: { url?: string } }, state: GovernanceRequestState): CallContext {
  return { identity: state.identity, requestId: String(request.id), route: request.routeOptions?.url, state, request };
}
