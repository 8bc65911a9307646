/**
 * Tools, structured output and images through /openai/v1, driven by the official `openai` client and the
 * Vercel AI SDK, with the OpenAI emulator behind the gateway: each test asserts what reached the upstream in
 * OpenAI's own format.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import type { OpenAiEmulator } from './emulators/openai-emulator';
import { OpenAiPair } from './support/openai-pair';
import { TestApps } from './support/test-apps';

const KEY = 'sk-openai-tools-KEY-5521';
const TOKEN = 'api-token-for-openai-tools';

let upstreams: OpenAiPair;
let upstream: OpenAiEmulator;
let apps: TestApps;
let baseURL: string;

beforeAll(async () => {
  upstreams = await OpenAiPair.start(KEY, { chatModels: ['gpt-test'], embeddingModels: ['embed-test'] });
  upstream = upstreams.openai;
  apps = new TestApps('tollgate-openai-tools-', { ...upstreams.env(), API_TOKEN: TOKEN });
  const { origin } = await apps.listen(
    ['version: 1', 'ai: { retry_attempts: 0, enable_fallback: false, default_provider: openai }', 'providers:', '  openai: { timeout: 2 }', '  deepseek: {}', ''].join('\n'),
  );
  baseURL = `${origin}/openai/v1`;
});

afterAll(async () => {
  await apps?.close();
  await upstreams?.close();
});

beforeEach(() => upstreams.reset());

const client = () => new OpenAI({ apiKey: TOKEN, baseURL, maxRetries: 0 });
const chatBodies = () => upstream.server.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as Record<string, any>);

const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const timeTool: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } };

describe('official openai client', () => {
  it('a manual two-step tool loop: tool calls, then the answer using the tool results', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris and the time?' }];
    const first = await client().chat.completions.create({ model: 'gpt-test', messages, tools: [weatherTool, timeTool], tool_choice: 'auto', parallel_tool_calls: true, seed: 4, presence_penalty: 0, frequency_penalty: 0, logprobs: false, n: 1 });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const calls = first.choices[0].message.tool_calls!;
    expect(calls.map((c) => c.type === 'function' && [c.function.name, c.function.arguments])).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['get_time', '{}'],
    ]);
    messages.push(first.choices[0].message, ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: c.id === calls[0].id ? 'sunny' : 'noon' })));
    const second = await client().chat.completions.create({ model: 'gpt-test', messages, tools: [weatherTool, timeTool] });
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'tool said: noon' } });

    const [firstBody, secondBody] = chatBodies();
    expect(firstBody).toMatchObject({
      tools: [weatherTool, { type: 'function', function: { name: 'get_time' } }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      seed: 4,
      presence_penalty: 0,
      frequency_penalty: 0,
    });
    expect(firstBody).not.toHaveProperty('logprobs');
    expect(secondBody.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: (c as { function: object }).function })) },
      { role: 'tool', tool_call_id: calls[0].id, content: 'sunny' },
      { role: 'tool', tool_call_id: calls[1].id, content: 'noon' },
    ]);
  });

  it('streams interleaved tool-call deltas that finalChatCompletion() assembles', async () => {
    const stream = client().chat.completions.stream({ model: 'gpt-test', messages: [{ role: 'user', content: 'go' }], tools: [weatherTool, timeTool] });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.tool_calls!.map((c) => c.type === 'function' && c.function)).toEqual([
      { name: 'get_weather', arguments: '{"city":"Paris"}' },
      { name: 'get_time', arguments: '{}' },
    ]);
    expect(chatBodies()[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('chat.completions.parse with a zod schema sends json_schema and parses the answer', async () => {
    const City = z.object({ city: z.string(), population: z.number() });
    const completion = await client().chat.completions.parse({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Biggest city in France?' }],
      response_format: zodResponseFormat(City, 'city'),
    });
    expect(completion.choices[0].message.parsed).toEqual({ city: 'Paris', population: 21 });
    expect(chatBodies()[0].response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'city', strict: true, schema: { type: 'object', required: ['city', 'population'] } } });
  });

  it('image parts reach the upstream as image_url, a base64 image as a data: URL', async () => {
    const completion = await client().chat.completions.create({
      model: 'gpt-test',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    expect(completion.choices[0].message.content).toBe('echo: Describe [image] [image]');
    expect(chatBodies()[0].messages[0].content).toEqual([
      { type: 'text', text: 'Describe' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
  });
});

describe('Vercel AI SDK', () => {
  const model = () => createOpenAICompatible({ name: 'tollgate', baseURL, apiKey: TOKEN, supportsStructuredOutputs: true })('gpt-test');
  const weather = tool({
    description: 'Weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  });

  it('generateText with tools runs the loop to the text answer (stopWhen)', async () => {
    const result = await generateText({ model: model(), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(result.steps).toHaveLength(2);
    expect(result.text).toBe('tool said: sunny in Paris');
    const callId = result.steps[0].toolCalls[0].toolCallId;
    expect(chatBodies()[1].messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: callId, content: 'sunny in Paris' },
    ]);
  });

  it('streamText assembles streamed tool calls', async () => {
    const result = streamText({ model: model(), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(await result.text).toBe('tool said: sunny in Paris');
    const calls = (await result.steps)[0].toolCalls;
    expect(calls.map((c) => [c.toolName, c.input])).toEqual([['weather', { city: 'Paris' }]]);
  });

  it('generateObject with a zod schema', async () => {
    const { object } = await generateObject({ model: model(), prompt: 'A city', schema: z.object({ city: z.string(), population: z.number() }) });
    expect(object).toEqual({ city: 'Paris', population: 21 });
    expect(chatBodies()[0].response_format).toMatchObject({ type: 'json_schema' });
  });
});
