import { anthropicStopReason, anthropicUsage, messageBody, modelsListBody, toolInput } from './anthropic-responses';

describe('anthropicStopReason', () => {
  it.each([
    [undefined, 'end_turn'],
    ['stop', 'end_turn'],
    ['tool_calls', 'tool_use'],
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    ['pause_turn', 'pause_turn'],
  ])('%s -> %s', (reason, expected) => expect(anthropicStopReason(reason)).toBe(expected));
});

const NO_USAGE = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
};

describe('anthropicUsage', () => {
  it('counts cache reads beside input_tokens, not inside them, so nothing is counted twice', () => {
    expect(anthropicUsage({ inputTokens: 100, outputTokens: 7, cachedInputTokens: 60 })).toEqual({
      input_tokens: 40,
      output_tokens: 7,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 60,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    });
    expect(anthropicUsage(undefined)).toEqual({ ...NO_USAGE });
  });

  it('moves cache writes out of input_tokens too, split into the 5-minute and 1-hour tiers', () => {
    expect(anthropicUsage({ inputTokens: 1000, outputTokens: 3, cachedInputTokens: 600, cacheWriteInputTokens: 300, cacheWrite1hInputTokens: 100 })).toEqual({
      input_tokens: 100,
      output_tokens: 3,
      cache_creation_input_tokens: 300,
      cache_read_input_tokens: 600,
      cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 },
    });
  });
});

describe('messageBody', () => {
  it('is a Message: text first, then tool_use blocks with their input objects', () => {
    const body = messageBody({
      model: 'openai/gpt-test',
      text: 'Checking.',
      finishReason: 'tool_calls',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    expect(body).toEqual({
      id: expect.stringMatching(/^msg_[0-9a-f]{24}$/),
      type: 'message',
      role: 'assistant',
      model: 'openai/gpt-test',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: NO_USAGE,
    });
  });

  it('keeps arguments that are not a JSON object rather than dropping them', () => {
    expect(toolInput('')).toEqual({});
    expect(toolInput('[1]')).toEqual({ _raw: '[1]' });
    expect(toolInput('{"a":')).toEqual({ _raw: '{"a":' });
  });
});

describe('modelsListBody', () => {
  it("is Anthropic's list page: provider models, then aliases, all on one page", () => {
    expect(modelsListBody([{ id: 'gpt-test', provider: 'openai' }], ['chat'])).toEqual({
      data: [
        { type: 'model', id: 'openai/gpt-test', display_name: 'openai/gpt-test', created_at: '1970-01-01T00:00:00.000Z' },
        { type: 'model', id: 'chat', display_name: 'chat', created_at: '1970-01-01T00:00:00.000Z' },
      ],
      has_more: false,
      first_id: 'openai/gpt-test',
      last_id: 'chat',
    });
  });
});
