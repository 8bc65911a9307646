/**
 * One line of the ledger: a model call as governance sees it, with who made it (from the call context)
 * and what it cost (from the pricing table). Money in integer micro-dollars; `costMicros` null when the
 * model has no price.
 */
import type { ModelCallOperation, ModelCallRecord, ModelCallStatus } from '../../ai/client/model-call';
import type { CallContext } from '../call-context';
import { costMicros, type ModelPrice } from './pricing';

export interface LedgerEntry {
  /** Epoch milliseconds when the call ended. */
  time: number;
  requestId: string | null;
  tenant: string | null;
  subTenant: string | null;
  /** User id, key id or `api-token`; null for calls made outside any request (e.g. a CLI command without one). */
  subject: string | null;
  keyId: string | null;
  route: string | null;
  /** Registration name of the provider. */
  provider: string;
  model: string;
  operation: ModelCallOperation;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costMicros: number | null;
  status: ModelCallStatus;
  estimated: boolean;
}

/** `price`: the model's price (see findPrice), undefined when it has none. */
export function toLedgerEntry(record: ModelCallRecord, context: CallContext | undefined, price: ModelPrice | undefined, time: number): LedgerEntry {
  const identity = context?.identity;
  const { usage } = record;
  return {
    time,
    requestId: context?.requestId ?? null,
    tenant: identity?.tenant ?? null,
    subTenant: identity?.subTenant ?? null,
    subject: identity?.subject ?? null,
    keyId: identity?.keyId ?? null,
    route: context?.route ?? null,
    provider: record.provider,
    model: record.model,
    operation: record.operation,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cachedTokens: usage.cachedTokens,
    costMicros: costMicros(price, usage),
    status: record.status,
    estimated: record.estimated,
  };
}
