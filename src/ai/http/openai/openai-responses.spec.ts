import { base64Embedding, chatCompletionBody, modelsBody, openAiFinishReason, openAiUsage } from './openai-responses';

describe('openAiFinishReason', () => {
  it.each([
    [undefined, 'stop'],
    ['stop', 'stop'],
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['STOP', 'stop'],
    ['length', 'length'],
    ['max_tokens', 'length'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['content_filter', 'content_filter'],
    ['refusal', 'content_filter'],
  ])('%s -> %s', (reason, expected) => {
    expect(openAiFinishReason(reason)).toBe(expected);
  });
});

describe('openAiUsage', () => {
  it('fills the total and missing counts', () => {
    expect(openAiUsage({ inputTokens: 4, outputTokens: 6 })).toEqual({ prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 });
    expect(openAiUsage({ totalTokens: 9 })).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 9 });
    expect(openAiUsage(undefined)).toBeUndefined();
  });
});

describe('chatCompletionBody', () => {
  it('has a fresh chatcmpl id per completion and leaves usage out when the provider reported none', () => {
    const first = chatCompletionBody({ provider: 'p', model: 'm', text: 't' });
    const second = chatCompletionBody({ provider: 'p', model: 'm', text: 't' });
    expect(first.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(first.id).not.toBe(second.id);
    expect(first.model).toBe('p/m');
    expect('usage' in first).toBe(false);
  });
});

describe('base64Embedding', () => {
  it('is the float32 little-endian bytes of the vector', () => {
    const encoded = Buffer.from(base64Embedding([0.5, -2, 1.25]), 'base64');
    expect(encoded).toHaveLength(12);
    expect([encoded.readFloatLE(0), encoded.readFloatLE(4), encoded.readFloatLE(8)]).toEqual([0.5, -2, 1.25]);
  });
});

describe('modelsBody', () => {
  it('lists provider/model ids owned by the provider unless the listing says otherwise', () => {
    expect(modelsBody([{ id: 'a', provider: 'p' }, { id: 'b', provider: 'q', ownedBy: 'org' }]).data).toEqual([
      { id: 'p/a', object: 'model', created: 0, owned_by: 'p' },
      { id: 'q/b', object: 'model', created: 0, owned_by: 'org' },
    ]);
  });
});
