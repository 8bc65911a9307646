import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidRequestError, InvalidResponseError, ProviderError } from '../../errors';
import type { ChatMessage, GenerateStreamChunk } from '../ai-provider.interface';
import { toAnthropicConversation } from './anthropic-messages';
import { fromAnthropicMessage } from './anthropic-response';
import { toAnthropicSampling } from './anthropic-sampling';
import { mapAnthropicStopReason } from './anthropic-stop-reason';
import { AnthropicStreamTranslator } from './anthropic-stream';
import { jsonOutputTool, toAnthropicToolFields } from './anthropic-tools';
import { toTokenUsage } from './anthropic-usage';

const fixture = (name: string) => readFileSync(join(__dirname, '../../../../test/fixtures/anthropic', name), 'utf8');

/** The `data:` objects of a recorded SSE stream, in order. */
function events(sse: string): Array<Record<string, unknown>> {
  return sse
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

function translateAll(sse: string, jsonTool?: string): GenerateStreamChunk[] {
  const translator = new AnthropicStreamTranslator('anthropic', 'claude-sonnet-4-5', jsonTool);
  return events(sse).flatMap((event) => translator.translate(event));
}

describe('Anthropic messages', () => {
  it('refuses an image detail other than auto and an image type the API does not take, naming the part', () => {
    const image = (mediaType: string) => ({ kind: 'base64' as const, mediaType, data: 'AAAA' });
    expect(() => toAnthropicConversation([{ role: 'user', content: [{ type: 'image', image: image('image/png'), detail: 'high' }] }], 'a')).toThrow(
      new InvalidRequestError("a: messages[0].content[0].image_url.detail 'high' is not supported by anthropic"),
    );
    expect(() => toAnthropicConversation([{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image', image: image('image/svg+xml') }] }], 'a')).toThrow(
      new InvalidRequestError('a: messages[0].content[1].image_url: anthropic takes images of type image/jpeg, image/png, image/gif, image/webp, not image/svg+xml'),
    );
    expect(toAnthropicConversation([{ role: 'user', content: [{ type: 'image', image: image('image/gif'), detail: 'auto' }] }], 'a').messages).toEqual([
      { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'AAAA' } }] },
    ]);
  });

  it('turns assistant tool calls into tool_use blocks and consecutive tool results into one user turn', () => {
    const converted = toAnthropicConversation(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather and time?' },
        {
          role: 'assistant',
          content: null,
          toolCalls: [
            { id: 'toolu_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
            { id: 'toolu_2', name: 'get_time', arguments: '' },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', content: '18C' },
        { role: 'tool', toolCallId: 'toolu_2', content: 'error: unknown zone' },
        { role: 'user', content: 'Thanks' },
      ],
      'anthropic',
    );
    expect(converted).toEqual({
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Weather and time?' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'error: unknown zone' },
          ],
        },
        { role: 'user', content: 'Thanks' },
      ],
    });
  });

  it('keeps assistant text before its tool_use blocks', () => {
    const { messages } = toAnthropicConversation(
      [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 't', name: 'f', arguments: '{}' }] },
      ],
      'anthropic',
    );
    expect(messages[1].content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 't', name: 'f', input: {} },
    ]);
  });

  it.each(['{"a":', '[1]', '"text"'])('refuses tool call arguments %s naming the message', (text) => {
    const convert = () =>
      toAnthropicConversation(
        [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, toolCalls: [{ id: 't', name: 'f', arguments: text }] },
        ],
        'anthropic',
      );
    expect(convert).toThrow(InvalidRequestError);
    expect(convert).toThrow('messages[1]');
  });

  it('maps base64 images to base64 sources and URLs to url sources', () => {
    const { messages } = toAnthropicConversation(
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0K' } },
            { type: 'image', image: { kind: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
      'anthropic',
    );
    expect(messages[0].content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });
});

describe('Anthropic tools and JSON output', () => {
  const tools = [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }];
  const ask = { messages: [{ role: 'user' as const, content: 'x' }] };

  it('maps tools to input_schema and every tool choice', () => {
    expect(toAnthropicToolFields({ ...ask, tools }, 'anthropic')).toEqual({
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: tools[0].parameters }],
    });
    expect(toAnthropicToolFields({ ...ask, tools: [{ name: 'now' }] }, 'anthropic').tools).toEqual([
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    const choice = (toolChoice: Parameters<typeof toAnthropicToolFields>[0]['toolChoice'], parallelToolCalls?: boolean) =>
      toAnthropicToolFields({ ...ask, tools, toolChoice, parallelToolCalls }, 'anthropic').tool_choice;
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('required')).toEqual({ type: 'any' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice({ name: 'get_weather' }, false)).toEqual({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true });
    expect(choice(undefined, false)).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice(undefined, true)).toBeUndefined();
  });

  it('forces one tool for json_schema and json_object', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    expect(toAnthropicToolFields({ ...ask, responseFormat: { type: 'json_schema', name: 'city', schema } }, 'anthropic')).toEqual({
      tools: [{ name: 'city', description: 'Answer with JSON matching this schema.', input_schema: schema }],
      tool_choice: { type: 'tool', name: 'city' },
    });
    expect(toAnthropicToolFields({ ...ask, responseFormat: { type: 'json_object' } }, 'anthropic').tool_choice).toEqual({
      type: 'tool',
      name: 'json_object',
    });
    expect(toAnthropicToolFields({ ...ask, responseFormat: { type: 'text' } }, 'anthropic')).toEqual({});
    expect(jsonOutputTool({ type: 'text' })).toBeUndefined();
  });

  it('refuses JSON output with tools, and a tool choice without tools', () => {
    expect(() => toAnthropicToolFields({ ...ask, tools, responseFormat: { type: 'json_object' } }, 'anthropic')).toThrow('response_format');
    expect(() => toAnthropicToolFields({ ...ask, toolChoice: 'required' }, 'anthropic')).toThrow(InvalidRequestError);
  });
});

describe('Anthropic sampling parameters', () => {
  const messages = [{ role: 'user' as const, content: 'Hi' }];

  it('sends what was given in the API\'s words, and nothing otherwise', () => {
    expect(toAnthropicSampling({ messages, temperature: 1, topP: 0.9, stop: ['END'], presencePenalty: 0, frequencyPenalty: 0 }, 'a')).toEqual({
      temperature: 1,
      top_p: 0.9,
      stop_sequences: ['END'],
    });
    expect(toAnthropicSampling({ messages, stop: [] }, 'a')).toEqual({});
    expect(toAnthropicSampling({ messages, topK: 5 }, 'a')).toEqual({ top_k: 5 });
  });

  it('refuses an OpenAI temperature above Anthropic\'s maximum of 1, naming it, instead of letting the API answer 400', () => {
    expect(() => toAnthropicSampling({ messages, temperature: 1.5 }, 'claude')).toThrow(
      new InvalidRequestError('claude: anthropic takes temperature from 0 to 1, not 1.5'),
    );
  });

  it.each([
    ['seed', { seed: 4 }],
    ['frequency_penalty', { frequencyPenalty: 0.5 }],
    ['presence_penalty', { presencePenalty: -1 }],
  ])('refuses %s, which it has no counterpart for', (name, given) => {
    expect(() => toAnthropicSampling({ messages, ...given }, 'a')).toThrow(`a: anthropic does not support ${name}`);
  });
});

describe('Anthropic results', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'pause_turn'],
  ])('maps stop_reason %s to %s', (reason, expected) => {
    expect(mapAnthropicStopReason(reason, false)).toBe(expected);
  });

  it('maps tool_use to stop when the tool carries the JSON answer', () => {
    expect(mapAnthropicStopReason('tool_use', true)).toBe('stop');
  });

  it('reads the searches a server tool made beside the tokens', () => {
    expect(toTokenUsage({ input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 3 } })).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15, webSearchRequests: 3 });
  });

  it('counts cache reads and writes as input, cache reads as cached', () => {
    expect(toTokenUsage({ input_tokens: 12, cache_creation_input_tokens: 100, cache_read_input_tokens: 2048, output_tokens: 85 })).toEqual({
      inputTokens: 2160,
      outputTokens: 85,
      totalTokens: 2245,
      cachedInputTokens: 2048,
      cacheWriteInputTokens: 100,
    });
    expect(toTokenUsage({ input_tokens: 3, output_tokens: 4 })).toEqual({ inputTokens: 3, outputTokens: 4, totalTokens: 7 });
  });

  it('reads a recorded answer with text and two tool calls', () => {
    expect(fromAnthropicMessage(JSON.parse(fixture('tool-use-message.json')), 'anthropic', 'claude-sonnet-4-5')).toEqual({
      text: "I'll check the weather.",
      model: 'claude-sonnet-4-5-20250929',
      finishReason: 'tool_calls',
      usage: { inputTokens: 2160, outputTokens: 85, totalTokens: 2245, cachedInputTokens: 2048, cacheWriteInputTokens: 100 },
      toolCalls: [
        { id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
        { id: 'toolu_01B19q90qw90lq917835lq0', name: 'get_time', arguments: '{}' },
      ],
    });
  });

  it('returns the forced JSON tool input as text', () => {
    const body = {
      model: 'claude-sonnet-4-5',
      content: [{ type: 'tool_use', id: 'toolu_9', name: 'city', input: { city: 'Paris' } }],
      stop_reason: 'tool_use',
    };
    expect(fromAnthropicMessage(body, 'anthropic', 'claude-sonnet-4-5', 'city')).toEqual({
      text: '{"city":"Paris"}',
      model: 'claude-sonnet-4-5',
      finishReason: 'stop',
    });
  });

  it('refuses a tool_use block without an input object', () => {
    const body = { content: [{ type: 'tool_use', id: 't', name: 'f', input: 'x' }] };
    expect(() => fromAnthropicMessage(body, 'anthropic', 'm')).toThrow(InvalidResponseError);
  });
});

describe('Anthropic stream events', () => {
  it('turns a recorded stream of text and two tool_use blocks into deltas indexed by tool order', () => {
    const chunks = translateAll(fixture('two-tool-calls.sse'));
    expect(chunks).toEqual([
      { done: false, text: 'Let me check ' },
      { done: false, text: 'both cities.' },
      { done: false, text: '', toolCalls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '' }] },
      { done: false, text: '', toolCalls: [{ index: 0, arguments: '{"location": "San Fra' }] },
      { done: false, text: '', toolCalls: [{ index: 0, arguments: 'ncisco, CA"}' }] },
      { done: false, text: '', toolCalls: [{ index: 1, id: 'toolu_01CVv4rGkNLLaZx1zMJvm9Kn', name: 'get_time', arguments: '' }] },
      { done: false, text: '', toolCalls: [{ index: 1, arguments: '{"zone":' }] },
      { done: false, text: '', toolCalls: [{ index: 1, arguments: ' "Europe/Paris"}' }] },
      {
        done: true,
        model: 'claude-sonnet-4-5-20250929',
        finishReason: 'tool_calls',
        usage: { inputTokens: 1496, outputTokens: 89, totalTokens: 1585, cachedInputTokens: 1024 },
      },
    ]);
  });

  it('keeps interleaved deltas of two tool blocks apart', () => {
    const translator = new AnthropicStreamTranslator('anthropic', 'm');
    const start = (index: number, id: string) => ({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: 'f', input: {} } });
    const piece = (index: number, partial_json: string) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
    const out = [start(0, 'a'), start(1, 'b'), piece(1, '{"x":'), piece(0, '{}'), piece(1, '1}')].flatMap((e) => translator.translate(e));
    expect(out.flatMap((c) => (c.done ? [] : (c.toolCalls ?? [])))).toEqual([
      { index: 0, id: 'a', name: 'f', arguments: '' },
      { index: 1, id: 'b', name: 'f', arguments: '' },
      { index: 1, arguments: '{"x":' },
      { index: 0, arguments: '{}' },
      { index: 1, arguments: '1}' },
    ]);
  });

  it('streams the forced JSON tool input as text and finishes with stop', () => {
    const translator = new AnthropicStreamTranslator('anthropic', 'm', 'city');
    const out = [
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'city', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ].flatMap((e) => translator.translate(e));
    expect(out).toEqual([
      { done: false, text: '{"city":' },
      { done: false, text: '"Paris"}' },
      { done: true, model: 'm', finishReason: 'stop', usage: { inputTokens: undefined, outputTokens: 5, totalTokens: undefined } },
    ]);
  });

  it('answers {} when the forced JSON tool streams no input text', () => {
    const translator = new AnthropicStreamTranslator('anthropic', 'm', 'json_object');
    const out = [
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'json_object', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_stop', index: 0 },
    ].flatMap((e) => translator.translate(e));
    expect(out).toEqual([{ done: false, text: '{}' }]);
  });

  it("reads a server tool's call (web search) as none of the caller's tool calls, and the answer's text around it", () => {
    const translator = new AnthropicStreamTranslator('anthropic', 'm');
    const out = [
      { type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"Paris"}' } },
      { type: 'content_block_start', index: 1, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] } },
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '', citations: [] } },
      { type: 'content_block_delta', index: 2, delta: { type: 'citations_delta', citation: { type: 'web_search_result_location' } } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Sunny.' } },
    ].flatMap((e) => translator.translate(e));
    expect(out).toEqual([{ done: false, text: 'Sunny.' }]);
  });

  it('refuses an input_json_delta for an unknown block, and maps an error event', () => {
    const translator = new AnthropicStreamTranslator('anthropic', 'm');
    expect(() => translator.translate({ type: 'content_block_delta', index: 4, delta: { type: 'input_json_delta', partial_json: '{' } })).toThrow(
      InvalidResponseError,
    );
    expect(() => translator.translate({ type: 'error', error: { type: 'overloaded_error', message: 'x' } })).toThrow(ProviderError);
  });
});

describe('Anthropic tool errors', () => {
  it('marks the result of a failed tool with is_error: true, and only that one', () => {
    const messages = JSON.parse(readFileSync(join(__dirname, '../../../../test/fixtures/domain/tool-error-messages.json'), 'utf8')) as ChatMessage[];
    expect(toAnthropicConversation(messages, 'anthropic').messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_weather', content: '{"temp":21}' },
        { type: 'tool_result', tool_use_id: 'call_time', content: 'unknown time zone: Atlantis', is_error: true },
      ],
    });
  });
});
