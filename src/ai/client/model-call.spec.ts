import { estimateTokens, measuredUsage, messageChars, requestInputTokens, TOKENS_PER_IMAGE, TOKENS_PER_MESSAGE, toolCallChars } from './model-call';

describe('estimateTokens', () => {
  it('counts four characters a token, rounding up, and nothing for no text', () => {
    expect(estimateTokens(0)).toBe(0);
    expect(estimateTokens(1)).toBe(1);
    expect(estimateTokens(8)).toBe(2);
    expect(estimateTokens(9)).toBe(3);
  });
});

describe('messageChars', () => {
  it('adds message texts, text parts and tool-call arguments, not images', () => {
    expect(
      messageChars([
        { role: 'system', content: 'abcd' },
        { role: 'user', content: [{ type: 'text', text: 'ef' }, { type: 'image', image: { kind: 'url', url: 'https://x/y.png' } }] },
        { role: 'assistant', content: null, toolCalls: [{ id: '1', name: 'go', arguments: '{}' }] },
        { role: 'tool', toolCallId: '1', content: 'ok' },
      ]),
    ).toBe(4 + 2 + 4 + 2);
  });

  it('counts partial tool-call deltas', () => {
    expect(toolCallChars([{ index: 0, name: 'f' }, { index: 0, arguments: '{"a"' }])).toBe(5);
  });
});

describe('requestInputTokens', () => {
  const messages = [
    { role: 'system' as const, content: 'abcd' },
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'efgh' }, { type: 'image' as const, image: { kind: 'url' as const, url: 'https://x/y.png' } }] },
  ];

  it('reserves the text, a per-message overhead and a fixed allowance per image', () => {
    expect(requestInputTokens(messages, {})).toBe(2 + 2 * TOKENS_PER_MESSAGE + TOKENS_PER_IMAGE);
  });

  it('reserves tool definitions and the response_format schema as serialised', () => {
    const tools = [{ name: 'lookup', description: 'd'.repeat(100_000), parameters: { type: 'object', properties: {} } }];
    const responseFormat = { type: 'json_schema' as const, name: 'answer', schema: { type: 'object', properties: { text: { type: 'string' } } } };
    const expected = estimateTokens(8 + JSON.stringify(tools).length + JSON.stringify(responseFormat).length) + 2 * TOKENS_PER_MESSAGE + TOKENS_PER_IMAGE;
    expect(requestInputTokens(messages, { tools, responseFormat })).toBe(expected);
    expect(expected).toBeGreaterThan(25_000);
  });
});

describe('measuredUsage', () => {
  it('takes the upstream report as it is, cached and reasoning tokens included', () => {
    expect(measuredUsage({ inputTokens: 10, outputTokens: 4, cachedInputTokens: 6, reasoningTokens: 2 }, 999, 999)).toEqual({
      usage: { inputTokens: 10, outputTokens: 4, cachedTokens: 6, reasoningTokens: 2 },
      estimated: false,
    });
  });

  it('estimates both sides from text length without a report', () => {
    expect(measuredUsage(undefined, 40, 9)).toEqual({ usage: { inputTokens: 10, outputTokens: 3, cachedTokens: 0 }, estimated: true });
  });

  it('completes a report that only has input tokens, marking it estimated when output text was received', () => {
    expect(measuredUsage({ inputTokens: 5 }, 40, 8)).toEqual({ usage: { inputTokens: 5, outputTokens: 2, cachedTokens: 0 }, estimated: true });
    expect(measuredUsage({ inputTokens: 5 }, 40, 0)).toEqual({ usage: { inputTokens: 5, outputTokens: 0, cachedTokens: 0 }, estimated: false });
  });
});
