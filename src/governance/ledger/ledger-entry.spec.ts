import type { ModelCallRecord } from '../../ai/client/model-call';
import { toLedgerEntry } from './ledger-entry';

const record: ModelCallRecord = {
  provider: 'eu-openai',
  providerKind: 'openai',
  model: 'gpt-4o',
  operation: 'stream',
  status: 'aborted',
  usage: { inputTokens: 100, outputTokens: 20, cachedTokens: 0, reasoningTokens: 5 },
  estimated: true,
};

describe('toLedgerEntry', () => {
  it("takes who called from the call context, a key's id included", () => {
    const entry = toLedgerEntry(
      record,
      { identity: { tenant: 't-1', subTenant: 'north', subject: 'k-9', subjectKind: 'key', keyId: 'k-9', roles: [] }, requestId: 'r-1', route: '/openai/v1/chat/completions' },
      { input: 2.5, output: 10 },
      1234,
    );
    expect(entry).toEqual({
      time: 1234,
      requestId: 'r-1',
      tenant: 't-1',
      subTenant: 'north',
      subject: 'k-9',
      keyId: 'k-9',
      route: '/openai/v1/chat/completions',
      provider: 'eu-openai',
      model: 'gpt-4o',
      operation: 'stream',
      inputTokens: 100,
      outputTokens: 20,
      cachedTokens: 0,
      costMicros: 450,
      status: 'aborted',
      estimated: true,
    });
  });

  it('leaves identity fields null outside any call context, and cost null without a price', () => {
    expect(toLedgerEntry(record, undefined, undefined, 1)).toMatchObject({ requestId: null, tenant: null, subTenant: null, subject: null, keyId: null, route: null, costMicros: null });
  });
});
