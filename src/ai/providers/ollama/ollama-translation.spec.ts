import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidRequestError, InvalidResponseError } from '../../errors';
import type { ChatMessage } from '../ai-provider.interface';
import { toOllamaMessages } from './ollama-messages';
import { ollamaModelSupports } from './ollama-model-features';
import { toOllamaFormat, toOllamaOptions, toOllamaTools } from './ollama-request-options';
import { fromOllamaToolCalls, mapOllamaFinishReason, ollamaUsage } from './ollama-response';

const fixtures = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'ollama');
const chatWithTools = JSON.parse(readFileSync(join(fixtures, 'chat-tool-calls.json'), 'utf8'));
const streamLines = readFileSync(join(fixtures, 'chat-stream-tool-calls.ndjson'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line));

describe('Ollama response translation', () => {
  it('keeps the ids newer servers send and makes call_<index> where none is sent; object arguments become JSON text', () => {
    expect(fromOllamaToolCalls(chatWithTools.message.tool_calls, 0, 'ollama')).toEqual([
      { id: 'call_k3x9', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
      { id: 'call_1', name: 'get_time', arguments: '{}' },
    ]);
  });

  it('numbers streamed calls across lines, so several calls in one stream keep distinct ids', () => {
    let count = 0;
    const calls = streamLines.flatMap((line) => {
      const found = fromOllamaToolCalls(line.message.tool_calls, count, 'ollama');
      count += found.length;
      return found;
    });
    expect(calls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_0', 'get_weather', '{"city":"Paris"}'],
      ['call_1', 'get_time', '{}'],
    ]);
  });

  it('reads absent, null and string arguments as given, and refuses a malformed list', () => {
    expect(fromOllamaToolCalls([{ function: { name: 'ping' } }], 0, 'o')[0].arguments).toBe('{}');
    expect(fromOllamaToolCalls([{ function: { name: 'ping', arguments: '{"a":1}' } }], 0, 'o')[0].arguments).toBe('{"a":1}');
    expect(fromOllamaToolCalls(undefined, 0, 'o')).toEqual([]);
    expect(() => fromOllamaToolCalls({ function: {} }, 0, 'o')).toThrow(InvalidResponseError);
    expect(() => fromOllamaToolCalls([{ function: { arguments: {} } }], 0, 'o')).toThrow(InvalidResponseError);
  });

  it.each([
    ['stop', false, 'stop'],
    ['stop', true, 'tool_calls'],
    [undefined, true, 'tool_calls'],
    ['length', false, 'length'],
    ['length', true, 'length'],
    ['load', false, 'load'],
    [undefined, false, undefined],
  ])('maps done_reason %s (tool calls: %s) to %s', (reason, sawToolCalls, expected) => {
    expect(mapOllamaFinishReason(reason, sawToolCalls)).toBe(expected);
  });

  it('reads usage from prompt_eval_count and eval_count (Ollama reports no cached tokens)', () => {
    expect(ollamaUsage(chatWithTools)).toEqual({ inputTokens: 212, outputTokens: 41, totalTokens: 253 });
    expect(ollamaUsage(streamLines[3])).toEqual({ inputTokens: 180, outputTokens: 25, totalTokens: 205 });
    expect(ollamaUsage({ done: true })).toBeUndefined();
  });
});

describe('Ollama request translation', () => {
  it('refuses an image detail other than auto, naming the part, rather than dropping it', () => {
    const image = { kind: 'base64' as const, mediaType: 'image/png', data: 'iVBORw0KGgo=' };
    expect(() => toOllamaMessages([{ role: 'user', content: [{ type: 'image', image, detail: 'low' }] }], 'ollama')).toThrow(
      new InvalidRequestError("ollama: messages[0].content[0].image_url.detail 'low' is not supported by ollama"),
    );
    expect(toOllamaMessages([{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image', image, detail: 'auto' }] }], 'ollama')).toEqual([
      { role: 'user', content: 'x', images: ['iVBORw0KGgo='] },
    ]);
  });

  const conversation: ChatMessage[] = [
    { role: 'system', content: 'Use tools.' },
    { role: 'user', content: 'Weather and time in Paris?' },
    {
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_1', name: 'get_time', arguments: '' },
      ],
    },
    { role: 'tool', toolCallId: 'call_1', content: '12:00' },
    { role: 'tool', toolCallId: 'call_0', content: 'Error: weather service down' },
  ];

  it('sends tool calls with object arguments and results by tool name, whatever their order', () => {
    expect(toOllamaMessages(conversation, 'ollama')).toEqual([
      { role: 'system', content: 'Use tools.' },
      { role: 'user', content: 'Weather and time in Paris?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { function: { name: 'get_weather', arguments: { city: 'Paris' } } },
          { function: { name: 'get_time', arguments: {} } },
        ],
      },
      { role: 'tool', content: '12:00', tool_name: 'get_time' },
      { role: 'tool', content: 'Error: weather service down', tool_name: 'get_weather' },
    ]);
  });

  it('refuses a tool result answering no earlier call, and arguments that are not a JSON object', () => {
    expect(() => toOllamaMessages([{ role: 'tool', toolCallId: 'nope', content: 'x' }], 'ollama')).toThrow(
      /messages\[0\]\.tool_call_id 'nope'/,
    );
    const badArguments: ChatMessage[] = [
      { role: 'assistant', content: null, toolCalls: [{ id: 'a', name: 'f', arguments: '[1]' }] },
    ];
    expect(() => toOllamaMessages(badArguments, 'ollama')).toThrow(/messages\[0\]\.tool_calls\[0\]\.function\.arguments/);
  });

  it('puts base64 images in the message images list and refuses URL images naming the part', () => {
    const png = { kind: 'base64' as const, mediaType: 'image/png', data: 'iVBORw0KGgo=' };
    expect(
      toOllamaMessages(
        [{ role: 'user', content: [{ type: 'text', text: 'A' }, { type: 'image', image: png }, { type: 'text', text: 'B' }] }],
        'ollama',
      ),
    ).toEqual([{ role: 'user', content: 'AB', images: ['iVBORw0KGgo='] }]);
    expect(() =>
      toOllamaMessages([{ role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'https://x.test/a.png' } }] }], 'o'),
    ).toThrow(InvalidRequestError);
  });

  it('maps tools, treats tool_choice auto as the default and none as no tools, and refuses the rest', () => {
    const tools = [{ name: 'ping' }];
    expect(toOllamaTools({ messages: [], tools }, 'o')).toEqual([
      { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(toOllamaTools({ messages: [], tools, toolChoice: 'auto', parallelToolCalls: true }, 'o')).toHaveLength(1);
    expect(toOllamaTools({ messages: [], tools, toolChoice: 'none' }, 'o')).toBeUndefined();
    expect(() => toOllamaTools({ messages: [], tools, toolChoice: { name: 'ping' } }, 'o')).toThrow(/tool_choice a named tool/);
    expect(() => toOllamaTools({ messages: [], tools, toolChoice: 'required' }, 'o')).toThrow(/tool_choice 'required'/);
    expect(() => toOllamaTools({ messages: [], tools, parallelToolCalls: false }, 'o')).toThrow(/parallel_tool_calls/);
  });

  it('maps response_format to format and sampling settings to options', () => {
    const schema = { type: 'object' };
    expect(toOllamaFormat({ messages: [], responseFormat: { type: 'json_object' } })).toBe('json');
    expect(toOllamaFormat({ messages: [], responseFormat: { type: 'json_schema', name: 's', schema } })).toBe(schema);
    expect(toOllamaFormat({ messages: [], responseFormat: { type: 'text' } })).toBeUndefined();
    expect(toOllamaOptions({ messages: [], seed: 0, frequencyPenalty: 0, presencePenalty: 1.5, stop: [] })).toEqual({
      seed: 0,
      frequency_penalty: 0,
      presence_penalty: 1.5,
    });
    expect(toOllamaOptions({ messages: [] })).toBeUndefined();
    expect(toOllamaOptions({ messages: [], topK: 20 })).toEqual({ top_k: 20 });
  });

  it('knows the vision families by name, tag and namespace', () => {
    expect(ollamaModelSupports('vision', 'library/qwen2.5vl:7b')).toBe(true);
    expect(ollamaModelSupports('vision', 'minicpm-v')).toBe(true);
    expect(ollamaModelSupports('vision', 'qwen2.5:7b')).toBe(false);
    expect(ollamaModelSupports('structuredOutput', 'qwen2.5:7b')).toBe(true);
  });

  it.each([
    ['qwen3-vl:8b', true],
    ['mistral-small3.2', true],
    ['llava-llama3', true],
    ['llava-phi3:3.8b', true],
    ['gemma3', true],
    ['gemma3:4b', true],
    ['gemma3:27b-it-qat', true],
    // Gemma 3's smallest sizes are text-only, and Gemma 3n is another family (text-only in Ollama).
    ['gemma3:1b', false],
    ['gemma3:270m', false],
    ['gemma3:1b-it-qat', false],
    ['gemma3n:e4b', false],
  ])('vision for %s: %s', (model, expected) => {
    expect(ollamaModelSupports('vision', model)).toBe(expected);
  });
});

describe('Ollama tool errors', () => {
  it('sends the result of a failed tool unchanged: the format has no error flag (docs/decisions.md B14)', () => {
    const messages = JSON.parse(readFileSync(join(__dirname, '../../../../test/fixtures/domain/tool-error-messages.json'), 'utf8')) as ChatMessage[];
    expect(toOllamaMessages(messages, 'ollama').slice(2)).toEqual([
      { role: 'tool', content: '{"temp":21}', tool_name: 'get_weather' },
      { role: 'tool', content: 'unknown time zone: Atlantis', tool_name: 'get_time' },
    ]);
  });
});
