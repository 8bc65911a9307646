/**
 * Tools, structured output, images, streaming, finish reasons and usage through /openai/v1, driven by the
 * official `openai` client and the Vercel AI SDK, with the Anthropic, Gemini and Ollama emulators behind the
 * gateway. Each flow runs once per provider; a small per-provider adapter scripts the emulator's tool calls and
 * asserts what reached the upstream in that provider's NATIVE format.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, stepCountIs, streamObject, streamText, tool } from 'ai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import OpenAI from 'openai';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import * as imageDownloads from '../src/ai/providers/image-downloads';
import { publicOnlyLookup } from '../src/ai/tools/tool-url-guard';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import type { LoggedRequest } from './emulators/emulator-server';
import { EMULATOR_THOUGHT_SIGNATURE, GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-openai-providers';
/** A 1x1 PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** The bytes the image server serves, distinct from the data: URL's so a test can tell them apart upstream. */
const SERVED_PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
/** Stands for a public image host: resolves to the loopback image server; every other name meets the real guard. */
const IMAGE_HOST = 'images.test';

type Json = Record<string, any>;
interface ScriptedCall {
  name: string;
  args: Record<string, unknown>;
}

/** What a test needs to know about one provider behind the gateway. */
interface ProviderCase {
  name: string;
  /** `registration/model`, as /openai/v1 clients name it. */
  model: string;
  /** A model of the provider that takes images. */
  visionModel: string;
  /** True where the API takes image bytes only, so the gateway downloads image URLs itself. */
  fetchesImageUrls: boolean;
  /** True where the provider documents its image types, so others are refused before the request. */
  checksImageTypes: boolean;
  /** Makes the next tool turn call exactly these tools with these arguments. */
  scriptCalls(calls: ScriptedCall[]): void;
  /** The answer text after tool results. */
  textAfterTools(results: string[]): string;
  /** The plain answer, and the JSON object the emulator writes for `{city: string, population: number}`. */
  reply: string;
  cityObject: { city: string; population: number };
  /** Bodies of the chat requests that reached the emulator, in order. */
  chatRequests(): LoggedRequest[];
  /** The tools as the provider declares them; `tool_choice: auto` as the provider says it (or nothing, its default). */
  expectToolsOffered(body: Json, tools: OpenAI.ChatCompletionFunctionTool[]): void;
  /** A `tool_choice` naming one tool, natively; undefined when the provider cannot force a tool (a 400 then). */
  expectNamedToolChoice?: (body: Json, name: string) => void;
  /** The second request of a loop carries the assistant's calls and the tool results, natively. */
  expectToolRoundTrip(body: Json, calls: Array<{ id: string; name: string; args: Record<string, unknown> }>, results: string[]): void;
  expectStructuredOutput(body: Json, name: string): void;
  /** `imageUrl` is the served image: `inlined` when the provider takes bytes only. */
  expectImages(body: Json, imageUrl: string): void;
  expectStreamed(request: LoggedRequest): void;
  expectMaxTokens(body: Json, maxTokens: number): void;
  /**
   * temperature 0.5, top_p 0.9, stop ['END'], seed 4, penalties 0.5 and 0.25 natively; undefined where seed,
   * penalties and OpenAI's temperatures above 1 are refused.
   */
  expectSampling?: (body: Json) => void;
  /** Makes the emulator report cached-prompt and reasoning tokens where the provider has such counts. */
  reportUsageDetails(): void;
  /** OpenAI's usage for what the emulator reports for a text answer to `body` (after reportUsageDetails). */
  usageOf(body: Json, answer: string): OpenAI.CompletionUsage;
}

const weatherTool: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const timeTool: OpenAI.ChatCompletionFunctionTool = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } };
const twoCalls: ScriptedCall[] = [
  { name: 'get_weather', args: { city: 'Paris' } },
  { name: 'get_time', args: {} },
];
const City = z.object({ city: z.string(), population: z.number() });

let anthropic: AnthropicEmulator;
let gemini: GeminiEmulator;
let ollama: OllamaEmulator;
let imageServer: Server;
let imageRequests: string[];
let apps: TestApps;
let baseURL: string;

const anthropicCase: ProviderCase = {
  name: 'anthropic',
  model: 'anthropic/claude-sonnet-4-5',
  visionModel: 'anthropic/claude-sonnet-4-5',
  fetchesImageUrls: false,
  checksImageTypes: true,
  scriptCalls: (calls) => {
    anthropic.options.toolInputs = Object.fromEntries(calls.map((c) => [c.name, c.args]));
  },
  textAfterTools: (results) => `Tool results: ${results.join(' | ')}`,
  reply: 'Hello from the Anthropic emulator',
  // A forced tool's input, made by the emulator from the schema.
  cityObject: { city: 'city-1', population: 1 },
  chatRequests: () => anthropic.server.requestsTo('/v1/messages'),
  expectToolsOffered: (body, tools) => {
    expect(body.tools).toEqual(
      tools.map(({ function: f }) => ({ name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), input_schema: f.parameters })),
    );
    expect(body.tool_choice ?? { type: 'auto' }).toEqual({ type: 'auto' });
  },
  expectNamedToolChoice: (body, name) => expect(body.tool_choice).toEqual({ type: 'tool', name }),
  expectToolRoundTrip: (body, calls, results) => {
    expect(body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          ...(body.messages[1].content[0].type === 'text' ? [{ type: 'text', text: 'Let me call a tool.' }] : []),
          ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args })),
        ],
      },
      { role: 'user', content: calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: results[i] })) },
    ]);
  },
  expectStructuredOutput: (body, name) => {
    expect(body.tools).toEqual([{ name, description: expect.any(String), input_schema: expect.objectContaining({ type: 'object', required: ['city', 'population'] }) }]);
    expect(body.tool_choice).toEqual({ type: 'tool', name });
  },
  expectImages: (body, imageUrl) => {
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: 'Describe' },
      { type: 'image', source: { type: 'url', url: imageUrl } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
    ]);
  },
  expectStreamed: (request) => expect(request.body).toMatchObject({ stream: true }),
  expectMaxTokens: (body, maxTokens) => expect(body.max_tokens).toBe(maxTokens),
  reportUsageDetails: () => {
    anthropic.options.cacheReadTokens = 40;
  },
  usageOf: (body, answer) => {
    // input_tokens leaves the cache reads out; OpenAI's prompt_tokens counts them.
    const prompt = JSON.stringify(body.messages).length + 40;
    const completion = JSON.stringify([{ type: 'text', text: answer }]).split(' ').length;
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: 40 } };
  },
};

const geminiCase: ProviderCase = {
  name: 'gemini',
  model: 'gemini/gemini-2.5-flash',
  visionModel: 'gemini/gemini-2.5-flash',
  fetchesImageUrls: true,
  checksImageTypes: true,
  scriptCalls: (calls) => {
    gemini.options.functionCalls = calls;
  },
  textAfterTools: () => 'Hello from the Gemini emulator',
  reply: 'Hello from the Gemini emulator',
  cityObject: { city: 'emulated', population: 1 },
  chatRequests: () => gemini.server.requests.filter((r) => /:(stream)?generateContent$/i.test(r.path)),
  expectToolsOffered: (body, tools) => {
    expect(body.tools).toEqual([
      {
        functionDeclarations: tools.map(({ function: f }) => ({
          name: f.name,
          ...(f.description !== undefined ? { description: f.description } : {}),
          parametersJsonSchema: f.parameters,
        })),
      },
    ]);
    expect(body.toolConfig ?? { functionCallingConfig: { mode: 'AUTO' } }).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
  },
  expectNamedToolChoice: (body, name) => expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } }),
  expectToolRoundTrip: (body, calls, results) => {
    expect(body.contents.slice(1)).toEqual([
      { role: 'model', parts: calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })) },
      { role: 'user', parts: calls.map((c, i) => ({ functionResponse: { name: c.name, response: { content: results[i] } } })) },
    ]);
  },
  expectStructuredOutput: (body) => {
    expect(body.generationConfig).toMatchObject({
      responseMimeType: 'application/json',
      responseJsonSchema: expect.objectContaining({ type: 'object', required: ['city', 'population'] }),
    });
    expect(body.tools).toBeUndefined();
  },
  expectImages: (body) => {
    expect(body.contents[0].parts).toEqual([
      { text: 'Describe' },
      { inlineData: { mimeType: 'image/png', data: SERVED_PNG.toString('base64') } },
      { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
    ]);
  },
  expectStreamed: (request) => {
    expect(request.path).toMatch(/:streamGenerateContent$/);
    expect(request.query.get('alt')).toBe('sse');
  },
  expectMaxTokens: (body, maxTokens) => expect(body.generationConfig.maxOutputTokens).toBe(maxTokens),
  expectSampling: (body) =>
    expect(body.generationConfig).toEqual({ temperature: 0.5, topP: 0.9, stopSequences: ['END'], seed: 4, presencePenalty: 0.5, frequencyPenalty: 0.25 }),
  reportUsageDetails: () => {
    gemini.options.thoughtsTokens = 6;
    gemini.options.cachedTokens = 4;
  },
  usageOf: (body, answer) => {
    // Thinking is billed as output but left out of candidatesTokenCount.
    const prompt = JSON.stringify(body.contents).length;
    const completion = answer.split(' ').length + 6;
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 6 },
    };
  },
};

const ollamaCase: ProviderCase = {
  name: 'ollama',
  model: 'ollama/llama3.2',
  visionModel: 'ollama/llava',
  fetchesImageUrls: true,
  checksImageTypes: false,
  scriptCalls: (calls) => {
    ollama.options.toolCalls = calls.map((c) => ({ name: c.name, arguments: c.args }));
  },
  textAfterTools: (results) => `Tool results: ${results.join(' | ')}`,
  reply: 'Hello from the Ollama emulator',
  cityObject: { city: 'ollama', population: 3 },
  chatRequests: () => ollama.server.requestsTo('/api/chat'),
  expectToolsOffered: (body, tools) => {
    expect(body.tools).toEqual(
      tools.map(({ function: f }) => ({ type: 'function', function: { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), parameters: f.parameters } })),
    );
    // Ollama has no tool_choice: auto is its only behaviour.
    expect(body).not.toHaveProperty('tool_choice');
  },
  expectToolRoundTrip: (body, calls, results) => {
    expect(body.messages.slice(1)).toEqual([
      { role: 'assistant', content: '', tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: c.args } })) },
      ...calls.map((c, i) => ({ role: 'tool', content: results[i], tool_name: c.name })),
    ]);
  },
  expectStructuredOutput: (body) => {
    expect(body.format).toEqual(expect.objectContaining({ type: 'object', required: ['city', 'population'] }));
  },
  expectImages: (body) => {
    expect(body.messages[0]).toEqual({ role: 'user', content: 'Describe', images: [SERVED_PNG.toString('base64'), PNG_BASE64] });
  },
  expectStreamed: (request) => expect((request.body as Json).stream).not.toBe(false),
  expectMaxTokens: (body, maxTokens) => expect(body.options.num_predict).toBe(maxTokens),
  expectSampling: (body) =>
    expect(body.options).toEqual({ temperature: 0.5, top_p: 0.9, stop: ['END'], seed: 4, presence_penalty: 0.5, frequency_penalty: 0.25 }),
  // Ollama counts no cached or reasoning tokens: none may be made up.
  reportUsageDetails: () => undefined,
  usageOf: (body, answer) => {
    const prompt = JSON.stringify(body.messages).length;
    const completion = answer.split(' ').length;
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  },
};

/** `images.test` resolves to the loopback image server; any other name goes through the guard's own DNS step. */
const imageLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  if (hostname !== IMAGE_HOST) return (publicOnlyLookup as LookupFunction)(hostname, options, callback as never);
  return options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
}) as LookupFunction;

beforeAll(async () => {
  imageRequests = [];
  imageServer = createServer((req, res) => {
    imageRequests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': SERVED_PNG.length }).end(SERVED_PNG);
  });
  await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
  // The adapters' image downloader, with the real URL guard, bounds and downloads; only the DNS answer for the
  // test host is local. Installed before the gateway builds its adapters, which take the downloader then.
  jest.spyOn(imageDownloads, 'createImageDownloader').mockImplementation((limits) => new imageDownloads.ImageDownloader(limits, { lookup: imageLookup }));

  [anthropic, gemini, ollama] = await Promise.all([
    startAnthropicEmulator(),
    startGeminiEmulator(),
    startOllamaEmulator({ models: ['llama3.2:latest', 'llava:latest'] }),
  ]);
  apps = new TestApps('tollgate-openai-providers-', { API_TOKEN: TOKEN });
  const { origin } = await apps.listen(
    [
      'version: 1',
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: anthropic }',
      'providers:',
      `  anthropic: { url: "${anthropic.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-sonnet-4-5, timeout: 5 }`,
      `  gemini: { url: "${gemini.url}", api_key: "${GEMINI_EMULATOR_KEY}", chat_model: gemini-2.5-flash, timeout: 5 }`,
      `  ollama: { url: "${ollama.url}", chat_model: llama3.2, timeout: 5 }`,
      '',
    ].join('\n'),
  );
  baseURL = `${origin}/openai/v1`;
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([anthropic?.close(), gemini?.close(), ollama?.close()]);
  await new Promise<void>((resolve) => (imageServer ? imageServer.close(() => resolve()) : resolve()));
  jest.restoreAllMocks();
});

beforeEach(() => {
  for (const emulator of [anthropic, gemini, ollama]) emulator.server.reset();
  anthropic.options.toolInputs = undefined;
  anthropic.options.cacheReadTokens = undefined;
  gemini.options.functionCalls = undefined;
  gemini.options.thoughtsTokens = undefined;
  gemini.options.cachedTokens = undefined;
  ollama.options.toolCalls = undefined;
  imageRequests.length = 0;
});

const client = () => new OpenAI({ apiKey: TOKEN, baseURL, maxRetries: 0 });
const bodies = (p: ProviderCase) => p.chatRequests().map((r) => r.body as Json);
const functionCalls = (message: OpenAI.ChatCompletionMessage) =>
  (message.tool_calls ?? []).map((c) => (c.type === 'function' ? { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) as Record<string, unknown> } : undefined));

describe.each([anthropicCase, geminiCase, ollamaCase])('/openai/v1 in front of $name', (provider) => {
  describe('official openai client', () => {
    it('a two-step tool loop: two tool calls in one turn (finish tool_calls), then the answer (finish stop)', async () => {
      provider.scriptCalls(twoCalls);
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris and the time?' }];
      const first = await client().chat.completions.create({ model: provider.model, messages, tools: [weatherTool, timeTool], tool_choice: 'auto' });
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      const calls = functionCalls(first.choices[0].message);
      expect(calls).toEqual(twoCalls.map((c) => ({ ...c, id: expect.any(String) })));
      expect(new Set(calls.map((c) => c!.id)).size).toBe(2);

      const results = ['sunny', 'noon'];
      messages.push(first.choices[0].message, ...calls.map((c, i) => ({ role: 'tool' as const, tool_call_id: c!.id, content: results[i] })));
      const second = await client().chat.completions.create({ model: provider.model, messages, tools: [weatherTool, timeTool] });
      expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: provider.textAfterTools(results) } });
      expect(second.choices[0].message.tool_calls ?? []).toEqual([]);

      const [firstBody, secondBody] = bodies(provider);
      provider.expectToolsOffered(firstBody, [weatherTool, timeTool]);
      provider.expectToolRoundTrip(secondBody, calls.map((c) => c!), results);
    });

    it('runTools with a zodFunction (a strict tool) runs the loop to the answer, streamed and not', async () => {
      const weather = zodFunction({ name: 'get_weather', parameters: z.object({ city: z.string() }), function: ({ city }) => `sunny in ${city}` });
      for (const stream of [false, true]) {
        provider.scriptCalls([twoCalls[0]]);
        const before = provider.chatRequests().length;
        const body = { model: provider.model, messages: [{ role: 'user' as const, content: 'Weather in Paris?' }], tools: [weather] };
        const runner = stream ? client().chat.completions.runTools({ ...body, stream }) : client().chat.completions.runTools(body);
        expect(await runner.finalContent()).toBe(provider.textAfterTools(['sunny in Paris']));
        const [call] = functionCalls(runner.messages.find((m) => m.role === 'assistant') as OpenAI.ChatCompletionMessage);
        const [first, second] = provider.chatRequests().slice(before);
        if (stream) provider.expectStreamed(first);
        // The runner sends a missing description as "", and strict: true, which each provider takes or documents as without effect.
        provider.expectToolsOffered(first.body as Json, [{ type: 'function', function: { name: 'get_weather', description: '', parameters: weather.function.parameters } }]);
        provider.expectToolRoundTrip(second.body as Json, [{ ...call!, args: { city: 'Paris' } }], ['sunny in Paris']);
      }
    });

    it('streams tool calls that finalChatCompletion() assembles, with usage', async () => {
      provider.scriptCalls(twoCalls);
      const stream = client().chat.completions.stream({
        model: provider.model,
        messages: [{ role: 'user', content: 'Weather in Paris and the time?' }],
        tools: [weatherTool, timeTool],
        stream_options: { include_usage: true },
      });
      const final = await stream.finalChatCompletion();
      expect(final.choices[0].finish_reason).toBe('tool_calls');
      expect(functionCalls(final.choices[0].message)).toEqual(twoCalls.map((c) => ({ ...c, id: expect.any(String) })));
      expect(final.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
      expect(final.usage!.total_tokens).toBe(final.usage!.prompt_tokens + final.usage!.completion_tokens);
      const [request] = provider.chatRequests();
      provider.expectStreamed(request);
      provider.expectToolsOffered(request.body as Json, [weatherTool, timeTool]);
    });

    it('tool_choice naming one tool: only that tool is called, or a 400 naming tool_choice where the provider cannot force one', async () => {
      const request = {
        model: provider.model,
        messages: [{ role: 'user' as const, content: 'What time is it?' }],
        tools: [weatherTool, timeTool],
        tool_choice: { type: 'function' as const, function: { name: 'get_time' } },
      };
      if (!provider.expectNamedToolChoice) {
        const error = await client().chat.completions.create(request).then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/tool_choice/);
        expect(provider.chatRequests()).toHaveLength(0);
        return;
      }
      const completion = await client().chat.completions.create(request);
      expect(completion.choices[0].finish_reason).toBe('tool_calls');
      expect(functionCalls(completion.choices[0].message).map((c) => c?.name)).toEqual(['get_time']);
      provider.expectNamedToolChoice(bodies(provider)[0], 'get_time');
    });

    it('chat.completions.parse with zodResponseFormat, and its streamed twin: the schema reaches the upstream natively, the answer parses', async () => {
      const request = {
        model: provider.model,
        messages: [{ role: 'user' as const, content: 'Biggest city in France?' }],
        response_format: zodResponseFormat(City, 'city'),
      };
      const completion = await client().chat.completions.parse(request);
      expect(completion.choices[0].finish_reason).toBe('stop');
      expect(completion.choices[0].message.parsed).toEqual(provider.cityObject);
      const streamed = await client().chat.completions.stream(request).finalChatCompletion();
      expect(streamed.choices[0].finish_reason).toBe('stop');
      expect(streamed.choices[0].message.parsed).toEqual(provider.cityObject);
      const [plain, stream] = provider.chatRequests();
      provider.expectStructuredOutput(plain.body as Json, 'city');
      provider.expectStructuredOutput(stream.body as Json, 'city');
      provider.expectStreamed(stream);
    });

    const describeImages = (imageUrl: string): OpenAI.ChatCompletionMessageParam[] => [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe' },
          { type: 'image_url', image_url: { url: imageUrl } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
        ],
      },
    ];

    it('image input, streamed and not: a base64 data: URL and an http URL (downloaded where the provider takes bytes only)', async () => {
      const imageUrl = `http://${IMAGE_HOST}:${(imageServer.address() as AddressInfo).port}/cat.png`;
      const request = { model: provider.visionModel, messages: describeImages(imageUrl) };
      const completion = await client().chat.completions.create(request);
      expect(completion.choices[0].finish_reason).toBe('stop');
      expect(completion.choices[0].message.content).toContain(provider.reply);
      const streamed = await client().chat.completions.stream(request).finalChatCompletion();
      expect(streamed.choices[0].message.content).toBe(completion.choices[0].message.content);

      for (const body of bodies(provider)) provider.expectImages(body, imageUrl);
      expect(imageRequests).toEqual(provider.fetchesImageUrls ? ['/cat.png', '/cat.png'] : []);
    });

    it('an image detail other than auto, or an image type the provider does not take: 400 naming the part, no upstream call', async () => {
      const refusal = (image_url: OpenAI.ChatCompletionContentPartImage.ImageURL) =>
        client()
          .chat.completions.create({ model: provider.visionModel, messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'image_url', image_url }] }] })
          .then(() => undefined, (e: unknown) => e);
      const detail = await refusal({ url: `data:image/png;base64,${PNG_BASE64}`, detail: 'high' });
      expect(detail).toBeInstanceOf(OpenAI.BadRequestError);
      expect((detail as Error).message).toContain(`messages[0].content[1].image_url.detail 'high' is not supported by ${provider.name}`);
      if (provider.checksImageTypes) {
        const svg = await refusal({ url: 'data:image/svg+xml;base64,PHN2Zz4=' });
        expect(svg).toBeInstanceOf(OpenAI.BadRequestError);
        expect((svg as Error).message).toContain('messages[0].content[1].image_url: ');
        expect((svg as Error).message).toContain('not image/svg+xml');
      }
      expect(provider.chatRequests()).toHaveLength(0);
    });

    it('an image URL on a private address: refused with 400 naming its host before any upstream call, where the gateway downloads it', async () => {
      const request = client().chat.completions.create({ model: provider.visionModel, messages: describeImages('http://10.1.2.3/secret.png') });
      if (!provider.fetchesImageUrls) {
        await request;
        expect(provider.chatRequests()).toHaveLength(1);
        return;
      }
      const streamed = client().chat.completions.stream({ model: provider.visionModel, messages: describeImages('http://10.1.2.3/secret.png') }).finalChatCompletion();
      for (const error of await Promise.all([request, streamed].map((p) => p.then(() => undefined, (e: unknown) => e)))) {
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as Error).message).toMatch(/image at 10\.1\.2\.3: is a loopback, private or link-local address/);
      }
      expect(provider.chatRequests()).toHaveLength(0);
    });

    it('max_tokens below the answer length: finish reason length, streamed or not', async () => {
      const request = { model: provider.model, messages: [{ role: 'user' as const, content: 'Say hello' }], max_tokens: 2 };
      const completion = await client().chat.completions.create(request);
      const truncated = provider.reply.split(' ').slice(0, 2).join(' ');
      expect(completion.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: truncated } });
      const streamed = await client().chat.completions.stream(request).finalChatCompletion();
      expect(streamed.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: truncated } });
      for (const body of bodies(provider)) provider.expectMaxTokens(body, 2);
    });

    it('sampling parameters reach the upstream in its own words; what it cannot take is refused naming the parameter', async () => {
      const sampling = { temperature: 0.5, top_p: 0.9, stop: ['END'] };
      const ask = { model: provider.model, messages: [{ role: 'user' as const, content: 'Say hello' }] };
      const extras = { seed: 4, presence_penalty: 0.5, frequency_penalty: 0.25 };
      if (!provider.expectSampling) {
        for (const [name, value] of Object.entries({ ...extras, temperature: 1.5 })) {
          const error = await client().chat.completions.create({ ...ask, ...sampling, [name]: value }).then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(OpenAI.BadRequestError);
          expect((error as Error).message).toContain(name);
        }
        expect(provider.chatRequests()).toHaveLength(0);
        await client().chat.completions.create({ ...ask, ...sampling, presence_penalty: 0, frequency_penalty: 0 });
        expect(bodies(provider)[0]).toMatchObject({ temperature: 0.5, top_p: 0.9, stop_sequences: ['END'] });
        return;
      }
      await client().chat.completions.create({ ...ask, ...sampling, ...extras });
      provider.expectSampling(bodies(provider)[0]);
    });

    it('usage is what the upstream reported, cached and reasoning tokens included, the same streamed and not', async () => {
      provider.reportUsageDetails();
      const request = { model: provider.model, messages: [{ role: 'user' as const, content: 'Say hello' }] };
      const completion = await client().chat.completions.create(request);
      const expected = provider.usageOf(bodies(provider)[0], provider.reply);
      expect(completion.usage).toEqual(expected);
      const streamed = await client().chat.completions.stream({ ...request, stream_options: { include_usage: true } }).finalChatCompletion();
      expect(streamed.usage).toEqual(expected);
    });
  });

  describe('Vercel AI SDK', () => {
    const model = () => createOpenAICompatible({ name: 'tollgate', baseURL, apiKey: TOKEN, supportsStructuredOutputs: true })(provider.model);
    const weather = tool({
      description: 'Weather in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => `sunny in ${city}`,
    });

    it('generateText with tools runs the loop to the text answer (stopWhen: stepCountIs)', async () => {
      provider.scriptCalls([{ name: 'weather', args: { city: 'Paris' } }]);
      const result = await generateText({ model: model(), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
      expect(result.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
      expect(result.text).toBe(provider.textAfterTools(['sunny in Paris']));
      const [call] = result.steps[0].toolCalls;
      expect([call.toolName, call.input]).toEqual(['weather', { city: 'Paris' }]);
      expect(result.totalUsage.inputTokens).toBeGreaterThan(0);
      provider.expectToolRoundTrip(bodies(provider)[1], [{ id: call.toolCallId, name: 'weather', args: { city: 'Paris' } }], ['sunny in Paris']);
    });

    it('streamText assembles streamed tool calls and finishes the loop', async () => {
      provider.scriptCalls([{ name: 'weather', args: { city: 'Paris' } }]);
      const result = streamText({ model: model(), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
      expect(await result.text).toBe(provider.textAfterTools(['sunny in Paris']));
      const steps = await result.steps;
      expect(steps[0].toolCalls.map((c) => [c.toolName, c.input])).toEqual([['weather', { city: 'Paris' }]]);
      expect(steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
      for (const request of provider.chatRequests()) provider.expectStreamed(request);
      provider.expectToolRoundTrip(provider.chatRequests()[1].body as Json, [{ id: steps[0].toolCalls[0].toolCallId, name: 'weather', args: { city: 'Paris' } }], ['sunny in Paris']);
    });

    it('generateObject with a zod schema', async () => {
      const { object, finishReason } = await generateObject({ model: model(), prompt: 'A city', schema: City });
      expect(finishReason).toBe('stop');
      expect(object).toEqual(provider.cityObject);
      provider.expectStructuredOutput(bodies(provider)[0], 'response');
    });

    it('streamObject with a zod schema: partial objects, then the whole', async () => {
      const result = streamObject({ model: model(), prompt: 'A city', schema: City });
      const partials: unknown[] = [];
      for await (const partial of result.partialObjectStream) partials.push(partial);
      expect(await result.object).toEqual(provider.cityObject);
      expect(partials.at(-1)).toEqual(provider.cityObject);
      const [request] = provider.chatRequests();
      provider.expectStreamed(request);
      provider.expectStructuredOutput(request.body as Json, 'response');
    });
  });
});

describe('Gemini 3 thought signatures survive a client tool loop through /openai/v1', () => {
  // A Gemini 3 model signs its first functionCall part and refuses (400) a replayed call turn without the signature.
  beforeEach(() => {
    gemini.options.signFunctionCalls = true;
  });
  afterEach(() => {
    gemini.options.signFunctionCalls = undefined;
  });

  it('the openai client replays the call ids it got, and the signature reaches Gemini on the first call part', async () => {
    geminiCase.scriptCalls(twoCalls);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris and the time?' }];
    const first = await client().chat.completions.create({ model: geminiCase.model, messages, tools: [weatherTool, timeTool] });
    const calls = functionCalls(first.choices[0].message);
    messages.push(first.choices[0].message, ...calls.map((c, i) => ({ role: 'tool' as const, tool_call_id: c!.id, content: ['sunny', 'noon'][i] })));
    const second = await client().chat.completions.create({ model: geminiCase.model, messages, tools: [weatherTool, timeTool] });

    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: geminiCase.reply } });
    const callParts = bodies(geminiCase)[1].contents[1].parts;
    expect(callParts[0]).toEqual({ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: EMULATOR_THOUGHT_SIGNATURE });
    expect(callParts[1]).toEqual({ functionCall: { name: 'get_time', args: {} } });
  });

  it('the AI SDK (streamed) replays them too', async () => {
    geminiCase.scriptCalls([{ name: 'weather', args: { city: 'Paris' } }]);
    const model = createOpenAICompatible({ name: 'tollgate', baseURL, apiKey: TOKEN })(geminiCase.model);
    const weather = tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` });
    const result = streamText({ model, prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });

    expect(await result.text).toBe(geminiCase.reply);
    expect(bodies(geminiCase)[1].contents[1].parts).toEqual([
      { functionCall: { name: 'weather', args: { city: 'Paris' } }, thoughtSignature: EMULATOR_THOUGHT_SIGNATURE },
    ]);
  });
});



