import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CapabilityNotSupportedError, InvalidRequestError, InvalidResponseError } from '../../errors';
import type { ChatMessage, GenerateStreamChunk, ProviderSettings } from '../ai-provider.interface';
import { DeepSeekProvider } from '../deepseek/deepseek.provider';
import { MistralProvider } from '../mistral/mistral.provider';
import { OpenAiProvider } from '../openai/openai.provider';
import { XaiProvider } from '../xai/xai.provider';
import { toOpenAiMessages } from './convert-messages';
import { parseToolCallDeltas, parseToolCalls } from './convert-tool-calls';
import { toOpenAiResponseFormat, toOpenAiToolChoice, toOpenAiTools } from './convert-tools';
import { parseUsage } from './convert-usage';
import { mapFinishReason } from './map-finish-reason';

const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'openai');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

/** One canned upstream answer per test; records the body that reached it. */
class ReplayServer {
  received: Record<string, unknown>[] = [];
  answer: { status: number; type: string; body: string } = { status: 200, type: 'application/json', body: '{}' };
  private readonly server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      this.received.push(JSON.parse(raw || '{}') as Record<string, unknown>);
      res.writeHead(this.answer.status, { 'content-type': this.answer.type });
      res.end(this.answer.body);
    });
  });
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const settings = (url: string, kind: ProviderSettings['kind'] = 'openai'): ProviderSettings => ({
  name: kind,
  kind,
  url,
  apiKey: 'sk-test',
  chatModel: 'gpt-4o-mini',
  timeoutMs: 5000,
});

describe('OpenAI chat translation: requests', () => {
  it('sends tool results, assistant tool calls with null content and images as URL and data: URL', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image', image: { kind: 'url', url: 'https://example.com/cat.png' }, detail: 'low' },
          { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'call_1', content: '{"error":"not found"}' },
    ];
    expect(toOpenAiMessages(messages)).toEqual([
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"error":"not found"}' },
    ]);
  });

  it('sends tools, tool choice and every response format in OpenAI shape', () => {
    expect(toOpenAiTools([{ name: 'now' }, { name: 'w', description: 'd', parameters: { type: 'object' }, strict: true }])).toEqual([
      { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
      { type: 'function', function: { name: 'w', description: 'd', parameters: { type: 'object' }, strict: true } },
    ]);
    expect(toOpenAiToolChoice('required')).toBe('required');
    expect(toOpenAiToolChoice({ name: 'w' })).toEqual({ type: 'function', function: { name: 'w' } });
    expect(toOpenAiResponseFormat({ type: 'text' })).toEqual({ type: 'text' });
    expect(toOpenAiResponseFormat({ type: 'json_object' })).toEqual({ type: 'json_object' });
    expect(toOpenAiResponseFormat({ type: 'json_schema', name: 'city', schema: { type: 'object' }, strict: true })).toEqual({
      type: 'json_schema',
      json_schema: { name: 'city', schema: { type: 'object' }, strict: true },
    });
  });
});

describe('OpenAI chat translation: answers', () => {
  it('maps every stop reason, including the other kinds’ words', () => {
    expect(['stop', 'length', 'tool_calls', 'content_filter', 'function_call', 'model_length', 'insufficient_system_resource'].map(mapFinishReason)).toEqual([
      'stop',
      'length',
      'tool_calls',
      'content_filter',
      'tool_calls',
      'length',
      'length',
    ]);
    expect(mapFinishReason(null)).toBeUndefined();
    expect(mapFinishReason('error')).toBe('error');
  });

  it('reads cached and reasoning tokens (OpenAI details and DeepSeek cache hits)', () => {
    expect(parseUsage(JSON.parse(fixture('completion-tool-calls.json')).usage)).toEqual({
      inputTokens: 1200,
      outputTokens: 300,
      totalTokens: 1500,
      cachedInputTokens: 1024,
      reasoningTokens: 192,
    });
    expect(parseUsage({ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, prompt_cache_hit_tokens: 8, prompt_cache_miss_tokens: 2 })).toEqual({
      inputTokens: 10,
      outputTokens: 2,
      totalTokens: 12,
      cachedInputTokens: 8,
    });
  });

  it('reads tool calls with empty arguments as "" or an object, and refuses a malformed list', () => {
    expect(parseToolCalls([{ id: 'a', type: 'function', function: { name: 'x', arguments: '' } }])).toEqual([{ id: 'a', name: 'x', arguments: '' }]);
    expect(parseToolCalls([{ id: 'b', type: 'function', function: { name: 'x', arguments: {} } }])).toEqual([{ id: 'b', name: 'x', arguments: '{}' }]);
    expect(parseToolCalls([{ type: 'function', function: { name: 'x', arguments: '{}' } }])).toEqual([{ id: expect.stringMatching(/^call_/), name: 'x', arguments: '{}' }]);
    expect(parseToolCalls('nope')).toBe('invalid');
    expect(parseToolCalls([{ id: 'c', function: {} }])).toBe('invalid');
    expect(parseToolCallDeltas([{ index: 2, function: { arguments: '' } }])).toEqual([{ index: 2 }]);
  });
});

describe('OpenAI-shaped adapters against a replayed upstream', () => {
  const upstream = new ReplayServer();
  let url: string;
  beforeAll(async () => (url = await upstream.start()));
  afterAll(() => upstream.stop());
  beforeEach(() => (upstream.received = []));

  it('returns tool calls, the mapped stop reason and cached usage from a completion', async () => {
    upstream.answer = { status: 200, type: 'application/json', body: fixture('completion-tool-calls.json') };
    const provider = new OpenAiProvider(settings(url));
    const result = await provider.generate({
      messages: [{ role: 'user', content: 'weather in Paris and the time?' }],
      tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, { name: 'get_time' }],
      toolChoice: 'auto',
      parallelToolCalls: true,
      seed: 7,
      frequencyPenalty: 0,
      presencePenalty: 0.5,
      responseFormat: { type: 'text' },
    });
    await provider.close();
    expect(result).toMatchObject({
      text: '',
      finishReason: 'tool_calls',
      toolCalls: [
        { id: 'call_weatherParis', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_timeNow', name: 'get_time', arguments: '{}' },
      ],
      usage: { cachedInputTokens: 1024, reasoningTokens: 192 },
    });
    expect(upstream.received[0]).toMatchObject({
      tools: [
        { type: 'function', function: { name: 'get_weather' } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      seed: 7,
      frequency_penalty: 0,
      presence_penalty: 0.5,
      response_format: { type: 'text' },
    });
  });

  it('streams two interleaved tool calls by index, then the stop reason and usage with cached tokens', async () => {
    upstream.answer = { status: 200, type: 'text/event-stream', body: fixture('stream-parallel-tool-calls.sse') };
    const provider = new OpenAiProvider(settings(url));
    const chunks: GenerateStreamChunk[] = [];
    for await (const chunk of provider.generateStream({ messages: [{ role: 'user', content: 'go' }], tools: [{ name: 'get_weather' }, { name: 'get_time' }] })) {
      chunks.push(chunk);
    }
    await provider.close();
    expect(upstream.received[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const deltas = chunks.flatMap((c) => (!c.done && c.toolCalls ? c.toolCalls : []));
    expect(deltas).toEqual([
      { index: 0, id: 'call_weatherParis', name: 'get_weather' },
      { index: 0, arguments: '{"city": ' },
      { index: 1, id: 'call_timeNow', name: 'get_time' },
      { index: 0, arguments: '"Paris"}' },
      { index: 1, arguments: '{}' },
    ]);
    expect(chunks.at(-1)).toEqual({
      done: true,
      model: 'gpt-4o-mini-2024-07-18',
      finishReason: 'tool_calls',
      usage: { inputTokens: 82, outputTokens: 37, totalTokens: 119, cachedInputTokens: 64, reasoningTokens: 0 },
    });
  });

  it('gives a streamed call without an id one id, on its first piece only', async () => {
    const frame = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    upstream.answer = {
      status: 200,
      type: 'text/event-stream',
      body:
        frame({ tool_calls: [{ index: 0, function: { name: 'now', arguments: '' } }] }) +
        frame({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }) +
        frame({}, 'tool_calls') +
        'data: [DONE]\n\n',
    };
    const provider = new OpenAiProvider(settings(url, 'openai'));
    const deltas = [];
    for await (const chunk of provider.generateStream({ messages: [{ role: 'user', content: 'go' }], tools: [{ name: 'now' }] })) {
      if (!chunk.done && chunk.toolCalls) deltas.push(...chunk.toolCalls);
    }
    await provider.close();
    expect(deltas).toEqual([{ index: 0, id: expect.stringMatching(/^call_/), name: 'now' }, { index: 0, arguments: '{}' }]);
  });

  it('refuses a malformed streamed tool_calls list as an invalid answer', async () => {
    upstream.answer = {
      status: 200,
      type: 'text/event-stream',
      body: `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: 'x' } }] })}\n\ndata: [DONE]\n\n`,
    };
    const provider = new OpenAiProvider(settings(url));
    const consume = async () => {
      for await (const _chunk of provider.generateStream({ messages: [{ role: 'user', content: 'go' }] })) void _chunk;
    };
    await expect(consume()).rejects.toBeInstanceOf(InvalidResponseError);
    await provider.close();
  });

  it('refuses json_schema on DeepSeek and images on a model family without vision, before any upstream call', async () => {
    const deepseek = new DeepSeekProvider({ ...settings(url, 'deepseek'), chatModel: 'deepseek-chat' });
    await expect(
      deepseek.generate({ messages: [{ role: 'user', content: 'x' }], responseFormat: { type: 'json_schema', name: 'n', schema: {} } }),
    ).rejects.toThrow(new CapabilityNotSupportedError('deepseek: deepseek does not support response_format json_schema'));
    const image: ChatMessage = { role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'https://example.com/a.png' } }] };
    await expect(deepseek.generate({ messages: [image] })).rejects.toBeInstanceOf(CapabilityNotSupportedError);
    await deepseek.close();
    expect(upstream.received).toHaveLength(0);
  });

  it('refuses top_k naming it before any upstream call, and leaves out a top_k a client sends as a routine default', async () => {
    upstream.answer = { status: 200, type: 'application/json', body: fixture('completion-tool-calls.json') };
    const provider = new OpenAiProvider(settings(url));
    const refused = await provider.generate({ messages: [{ role: 'user', content: 'x' }], topK: 40 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ param: 'top_k', message: 'openai: openai does not support top_k' });
    expect(upstream.received).toHaveLength(0);
    await provider.generate({ messages: [{ role: 'user', content: 'x' }], topK: 64, topKOptional: true });
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]).not.toHaveProperty('top_k');
    await provider.close();
  });

  it('answers vision per model family', async () => {
    const mistral = new MistralProvider({ ...settings(url, 'mistral'), chatModel: 'mistral-small-latest' });
    const xai = new XaiProvider({ ...settings(url, 'xai'), chatModel: 'grok-3-mini' });
    const openai = new OpenAiProvider(settings(url));
    expect([mistral.supportsFeature('vision', undefined), mistral.supportsFeature('vision', 'pixtral-large-latest'), mistral.supportsFeature('vision', 'codestral-latest')]).toEqual([true, true, false]);
    expect([xai.supportsFeature('vision', undefined), xai.supportsFeature('vision', 'grok-2-vision-1212'), xai.supportsFeature('tools', undefined)]).toEqual([false, true, true]);
    expect([openai.supportsFeature('vision', 'gpt-4o'), openai.supportsFeature('vision', 'gpt-3.5-turbo')]).toEqual([true, false]);
    const openaiVision = ['gpt-4.1', 'gpt-4-turbo', 'gpt-4-turbo-2024-04-09', 'gpt-4o-mini', 'o1', 'o3', 'gpt-5', 'gpt-4', 'gpt-4-0613', 'gpt-4-0125-preview', 'gpt-4-turbo-preview', 'o1-preview', 'o3-mini'];
    expect(openaiVision.map((model) => openai.supportsFeature('vision', model))).toEqual([true, true, true, true, true, true, true, false, false, false, false, false, false]);
    const mistralVision = ['mistral-medium-2505', 'mistral-small-2503', 'mistral-small-2506', 'magistral-medium-2509', 'magistral-small-latest', 'mistral-small-2501', 'mistral-medium-2312', 'magistral-medium-2506', 'ministral-8b-2410'];
    expect(mistralVision.map((model) => mistral.supportsFeature('vision', model))).toEqual([true, true, true, true, true, false, false, false, false]);
    await Promise.all([mistral.close(), xai.close(), openai.close()]);
  });
});

describe('OpenAI-shaped tool errors', () => {
  it('sends the result of a failed tool unchanged: the format has no error flag (docs/decisions.md B14)', () => {
    const messages = JSON.parse(readFileSync(join(FIXTURES, '..', 'domain', 'tool-error-messages.json'), 'utf8')) as ChatMessage[];
    expect(toOpenAiMessages(messages).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_weather', content: '{"temp":21}' },
      { role: 'tool', tool_call_id: 'call_time', content: 'unknown time zone: Atlantis' },
    ]);
  });
});
