import { chatMessages, OpenAiRequestError, parseChatRequest, parseEmbeddingsRequest, stopSequences } from './openai-requests';

function refusal(call: () => unknown): OpenAiRequestError {
  try {
    call();
  } catch (error) {
    if (error instanceof OpenAiRequestError) return error;
    throw error;
  }
  throw new Error('expected an OpenAiRequestError');
}

const user = { role: 'user', content: 'hi' };

describe('parseChatRequest', () => {
  it('returns a valid body as it is (no copy)', () => {
    const body = { model: 'gpt', messages: [user], stream: true, stream_options: { include_usage: true }, max_tokens: 5, temperature: 0, top_p: 1, stop: 'x', n: 1, user: 'u1' };
    expect(parseChatRequest(body)).toBe(body);
  });

  it.each([
    [null, null, "Invalid type for 'body': expected object."],
    [[], null, "Invalid type for 'body': expected object."],
    [{ messages: [user] }, 'model', "Missing required parameter: 'model'."],
    [{ model: '', messages: [user] }, 'model', "Invalid value for 'model': must not be empty."],
    [{ model: 'm', messages: [user, { role: 'function', content: 'x' }] }, 'messages[1].role', "Invalid value for 'messages[1].role': expected one of system, developer, user, assistant, tool."],
    [{ model: 'm', messages: [{ ...user, tool_calls: [] }] }, 'messages[0].tool_calls', "Invalid value for 'messages[0].tool_calls': must hold at least 1 item(s)."],
    [{ model: 'm', messages: [user], logprobs: true }, 'logprobs', "Unsupported value: 'logprobs' true is not supported by this gateway; only false is accepted."],
    [{ model: 'm', messages: [user], frequency_penalty: 3 }, 'frequency_penalty', "Invalid value for 'frequency_penalty': must be <= 2."],
    [{ model: 'm', messages: [user], top_logprobs: 2 }, 'top_logprobs', 'Unrecognized request argument supplied: top_logprobs'],
    [{ model: 'm', messages: [user], temperature: '1' }, 'temperature', "Invalid type for 'temperature': expected number."],
    [{ model: 'm', messages: [user], top_p: 1.5 }, 'top_p', "Invalid value for 'top_p': must be <= 1."],
    [{ model: 'm', messages: [user], max_tokens: 1.5 }, 'max_tokens', "Invalid type for 'max_tokens': expected integer."],
    [{ model: 'm', messages: [user], stop: [1] }, 'stop[0]', "Invalid type for 'stop[0]': expected string."],
    [{ model: 'm', messages: [user], seed: 1.5 }, 'seed', "Invalid type for 'seed': expected integer."],
  ])('%j -> param %s', (body, param, message) => {
    const error = refusal(() => parseChatRequest(body));
    expect(error.param).toBe(param);
    expect(error.message).toBe(message);
  });
});

describe('parseEmbeddingsRequest', () => {
  it('takes a string or a list of strings and the two encodings', () => {
    expect(parseEmbeddingsRequest({ model: 'e', input: 'a' }).input).toBe('a');
    expect(parseEmbeddingsRequest({ model: 'e', input: ['a', 'b'], encoding_format: 'base64' }).encoding_format).toBe('base64');
  });

  it.each([
    [{ model: 'e', input: '' }, 'input'],
    [{ model: 'e', input: [] }, 'input'],
    [{ model: 'e', input: [[1, 2]] }, 'input[0]'],
    [{ model: 'e', input: 'a', encoding_format: 'int8' }, 'encoding_format'],
    [{ model: 'e', input: 'a', dimensions: 8 }, 'dimensions'],
  ])('%j -> param %s', (body, param) => {
    expect(refusal(() => parseEmbeddingsRequest(body)).param).toBe(param);
  });
});

describe('chatMessages', () => {
  it('maps developer to system, image_url parts to images, assistant tool calls with null content and tool results', () => {
    expect(
      chatMessages([
        { role: 'developer', content: [{ type: 'text', text: 'ru' }, { type: 'text', text: 'les' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'data:image/PNG;base64,iVBORw0KGgo=' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'now', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'noon' },
      ]),
    ).toEqual([
      { role: 'system', content: 'rules' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'image', image: { kind: 'url', url: 'https://example.com/a.png' }, detail: 'high' },
          { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'now', arguments: '' }] },
      { role: 'tool', toolCallId: 'call_1', content: 'noon' },
    ]);
  });

  it.each([
    [[{ role: 'user' }], 'messages[0].content'],
    [[{ role: 'tool', content: 'x' }], 'messages[0].tool_call_id'],
    [[{ role: 'user', content: 'x', tool_call_id: 'c' }], 'messages[0].tool_call_id'],
    [[{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }], 'messages[0].content'],
    [[{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }], 'messages[0].content'],
  ])('%j is refused naming %s', (messages, param) => {
    expect(refusal(() => chatMessages(messages as Parameters<typeof chatMessages>[0])).param).toBe(param);
  });
});

describe('stopSequences', () => {
  it('a string becomes a list; null and absent are none', () => {
    expect(stopSequences('x')).toEqual(['x']);
    expect(stopSequences(['a', 'b'])).toEqual(['a', 'b']);
    expect(stopSequences(null)).toBeUndefined();
    expect(stopSequences(undefined)).toBeUndefined();
  });
});
