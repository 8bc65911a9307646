/**
 * Google's official client, `@google/genai`, with Tollgate as its base URL (`<tollgate>/gemini`), on every
 * emulator kind behind the gateway (issue 28, surface 3): generateContent, generateContentStream, a
 * function-calling loop, countTokens, the model list, and a spent budget that throws at once.
 */
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, type Content, type FunctionDeclaration, Type } from '@google/genai';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import { GEMINI_BODY_MARKER, GEMINI_EMULATOR_KEY, type GeminiEmulator, geminiError, startGeminiEmulator } from './emulators/gemini-emulator';
import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { OpenAiEmulator, UPSTREAM_MARKER } from './emulators/openai-emulator';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-gemini-sdk';
const ADMIN_TOKEN = 'admin-token-for-gemini-sdk';
const UPSTREAM_KEY = 'sk-emulator-gemini-sdk';

let apps: TestApps;
let gemini: GeminiEmulator;
let openai: OpenAiEmulator;
let anthropic: AnthropicEmulator;
let ollama: OllamaEmulator;
let origin: string;

beforeAll(async () => {
  [gemini, openai, anthropic, ollama] = await Promise.all([
    startGeminiEmulator({ signFunctionCalls: true }),
    OpenAiEmulator.start({ apiKey: UPSTREAM_KEY }),
    startAnthropicEmulator(),
    startOllamaEmulator({ models: ['llama3.2:latest'], toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }),
  ]);
  apps = new TestApps('tollgate-gemini-sdk-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      `api: { token: "${TOKEN}" }`,
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: gemini }',
      'providers:',
      `  gemini: { url: "${gemini.url}", api_key: "${GEMINI_EMULATOR_KEY}", chat_model: gemini-2.5-flash, timeout: 5 }`,
      `  openai: { url: "${openai.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 5 }`,
      `  anthropic: { url: "${anthropic.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-sonnet-4-5, timeout: 5 }`,
      `  ollama: { url: "${ollama.url}", chat_model: llama3.2, timeout: 5 }`,
      `governance: { admin_token: "${ADMIN_TOKEN}" }`,
      '',
    ].join('\n'),
  ));
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([gemini?.close(), openai?.close(), anthropic?.close(), ollama?.close()]);
});

function client(apiKey = TOKEN): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${origin}/gemini` } });
}

const weather: FunctionDeclaration = {
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
};

describe.each([
  { kind: 'gemini', model: 'gemini/gemini-2.5-flash' },
  { kind: 'openai', model: 'openai/gpt-test' },
  { kind: 'anthropic', model: 'anthropic/claude-sonnet-4-5' },
  { kind: 'ollama', model: 'ollama/llama3.2' },
])('@google/genai on $kind', ({ model }) => {
  it('generateContent answers text, usage and the model that answered', async () => {
    const response = await client().models.generateContent({ model, contents: 'Hello', config: { systemInstruction: 'Be brief.', temperature: 0.2, maxOutputTokens: 64 } });
    expect(response.text).toEqual(expect.stringMatching(/\S/));
    expect(response.candidates?.[0].finishReason).toBe('STOP');
    expect(response.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    expect(response.modelVersion).toBe(model);
  });

  it('generateContentStream yields the text in chunks and usage on the last', async () => {
    const chunks = [];
    for await (const chunk of await client().models.generateContentStream({ model, contents: 'Hello' })) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.text ?? '').join('')).toEqual(expect.stringMatching(/\S/));
    expect(chunks.at(-1)?.candidates?.[0].finishReason).toBe('STOP');
    expect(chunks.at(-1)?.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
  });

  it('runs a function-calling loop', async () => {
    const ai = client();
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
    // Ollama takes no forced call (refused by name below); AUTO is what Gemini CLI sends.
    const config = { tools: [{ functionDeclarations: [weather] }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } } };
    const first = await ai.models.generateContent({ model, contents, config });
    expect(first.functionCalls?.map((call) => call.name)).toEqual(['get_weather']);
    contents.push(first.candidates![0].content!, { role: 'user', parts: first.functionCalls!.map((call) => ({ functionResponse: { name: call.name!, response: { output: 'sunny' } } })) });
    const second = await ai.models.generateContent({ model, contents, config: { tools: config.tools } });
    expect(second.functionCalls).toBeUndefined();
    expect(second.text).toEqual(expect.stringMatching(/\S/));
  });

  it('refuses what the target cannot do by Gemini\'s field name, or does it', async () => {
    const forced = client().models.generateContent({
      model,
      contents: 'Weather in Paris?',
      config: { tools: [{ functionDeclarations: [weather] }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } } },
    });
    if (model.startsWith('ollama/')) {
      const error = (await forced.catch((caught: unknown) => caught)) as ApiError;
      expect(error).toBeInstanceOf(ApiError);
      expect(error.status).toBe(400);
      expect(error.message).toContain("field 'toolConfig.functionCallingConfig.mode'");
    } else {
      expect((await forced).functionCalls?.[0].name).toBe('get_weather');
    }
  });

  it('countTokens estimates the prompt', async () => {
    const counted = await client().models.countTokens({ model, contents: 'x'.repeat(400) });
    expect(counted.totalTokens).toBe(104);
  });
});

describe('@google/genai and a stream that fails or is abandoned', () => {
  afterEach(() => {
    gemini.options.streamErrorCode = undefined;
  });

  it('generateContentStream throws an ApiError when the upstream fails mid-stream, after the text it had', async () => {
    gemini.options.streamErrorCode = 500;
    const texts: string[] = [];
    const read = async () => {
      for await (const chunk of await client().models.generateContentStream({ model: 'gemini/gemini-2.5-flash', contents: 'Hello' })) texts.push(chunk.text ?? '');
    };
    const error = await read().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBeGreaterThanOrEqual(500);
    expect(texts.join('')).toEqual(expect.stringMatching(/\S/));
  });

  it('an abort of generateContentStream mid-stream ends the upstream request', async () => {
    openai.server.reset();
    openai.server.inject({ kind: 'stream', chunkDelayMs: 200 });
    const controller = new AbortController();
    const stream = await client().models.generateContentStream({ model: 'openai/gpt-test', contents: 'a slow answer of many words', config: { abortSignal: controller.signal } });
    const aborted = openai.server.waitForAbort();
    await stream.next();
    controller.abort();
    await aborted;
    expect(openai.server.requests.find((request) => request.path.endsWith('/chat/completions'))?.aborted).toBe(true);
  });
});

/**
 * Gemini CLI retries every 5xx five times with back-off and stops on a 4xx: what a retry cannot fix must not
 * be a 5xx. Each case scripts one upstream answer and reads the ApiError @google/genai throws.
 */
describe('@google/genai and an upstream that refuses or fails: Google\'s statuses, UNAVAILABLE only when a retry can help', () => {
  afterEach(() => {
    gemini.server.reset();
    openai.server.reset();
  });

  async function failure(model: string): Promise<ApiError> {
    const error = await client().models.generateContent({ model, contents: 'Hello' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).not.toContain(UPSTREAM_MARKER);
    expect((error as ApiError).message).not.toContain(GEMINI_BODY_MARKER);
    return error as ApiError;
  }

  it('a Gemini upstream\'s 400 INVALID_ARGUMENT is 400 INVALID_ARGUMENT', async () => {
    gemini.server.inject({ kind: 'status', status: 400, body: geminiError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.') });
    const error = await failure('gemini/gemini-2.5-flash');
    expect(error.status).toBe(400);
    expect(error.message).toContain('INVALID_ARGUMENT');
  });

  it('a prompt the Gemini upstream blocks (promptFeedback.blockReason) is 400 INVALID_ARGUMENT', async () => {
    gemini.server.inject({ kind: 'status', status: 200, body: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } } });
    const error = await failure('gemini/gemini-2.5-flash');
    expect(error.status).toBe(400);
    expect(error.message).toContain('blocked the prompt (SAFETY)');
  });

  it('an OpenAI upstream\'s 400 invalid_request_error is 400 INVALID_ARGUMENT', async () => {
    openai.server.inject({ kind: 'status', status: 400, body: { error: { message: `Invalid 'messages'. ${UPSTREAM_MARKER}`, type: 'invalid_request_error', param: 'messages', code: null } } });
    const error = await failure('openai/gpt-test');
    expect(error.status).toBe(400);
    expect(error.message).toContain('INVALID_ARGUMENT');
  });

  it('the gateway\'s credentials refused upstream are 403 PERMISSION_DENIED', async () => {
    openai.server.inject({ kind: 'status', status: 401, body: { error: { message: `Incorrect API key provided. ${UPSTREAM_MARKER}`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } });
    const error = await failure('openai/gpt-test');
    expect(error.status).toBe(403);
    expect(error.message).toContain('PERMISSION_DENIED');
  });

  it('an upstream 500 is 503 UNAVAILABLE, which a client may retry', async () => {
    openai.serverErrorNext(500);
    const error = await failure('openai/gpt-test');
    expect(error.status).toBe(503);
    expect(error.message).toContain('UNAVAILABLE');
  });

  it('a malformed upstream answer is 500 INTERNAL', async () => {
    openai.server.inject({ kind: 'malformed' });
    const error = await failure('openai/gpt-test');
    expect(error.status).toBe(500);
    expect(error.message).toContain('INTERNAL');
  });
});

describe('@google/genai and governance', () => {
  async function createKey(settings: Record<string, unknown>): Promise<string> {
    const response = await fetch(`${origin}/v1/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: 't-gemini-sdk', ...settings }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { key: string }).key;
  }

  it('throws at once on a spent budget: ApiError 429 RESOURCE_EXHAUSTED naming the daily quota', async () => {
    const ai = client(await createKey({ name: 'spent', budget_tokens: 1, period: 'day' }));
    const started = Date.now();
    const error = await ai.models.generateContent({ model: 'openai/gpt-test', contents: 'Hello' }).catch((caught: unknown) => caught);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(429);
    expect((error as ApiError).message).toContain('RESOURCE_EXHAUSTED');
    expect((error as ApiError).message).toContain('PerDay');
  });

  it('lists the models the key may use', async () => {
    const ai = client(await createKey({ name: 'listing', models: ['openai/*'] }));
    const names: string[] = [];
    for await (const model of await ai.models.list()) names.push(model.name!);
    expect(names).toContain('models/openai/gpt-test');
    expect(names.some((name) => name.startsWith('models/gemini/'))).toBe(false);
  });

  it('throws PERMISSION_DENIED for a model the key may not use', async () => {
    const ai = client(await createKey({ name: 'narrow', models: ['openai/*'] }));
    const error = await ai.models.generateContent({ model: 'gemini/gemini-2.5-flash', contents: 'Hello' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(403);
    expect((error as ApiError).message).toContain('PERMISSION_DENIED');
  });
});

describe('the OpenAPI document', () => {
  it('describes the three routes: both request schemas the POST validates with, in OpenAPI 3.0 terms, its answers and Google\'s error', async () => {
    const document = (await (await fetch(`${origin}/docs-json`)).json()) as Record<string, any>;
    const call = document.paths['/gemini/v1beta/models/{path}'].post;
    expect(call.summary).toContain('generateContent, streamGenerateContent and countTokens');
    expect(call.parameters.map((parameter: { name: string; in: string }) => `${parameter.in} ${parameter.name}`).sort()).toEqual(['path path', 'query alt', 'query key']);
    const [generate, count] = call.requestBody.content['application/json'].schema.oneOf;
    expect(generate.required).toEqual(['contents']);
    expect(Object.keys(generate.properties)).toEqual(expect.arrayContaining(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig']));
    expect(Object.keys(count.properties)).toEqual(['contents', 'generateContentRequest']);
    expect(JSON.stringify(call.requestBody)).not.toMatch(/"type":\[|"const":|"type":true/);
    expect(Object.keys(call.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
    expect(call.responses['200'].content['application/json'].schema.oneOf[0].required).toEqual(['candidates', 'modelVersion', 'responseId']);
    expect(call.responses.default.content['application/json'].schema.properties.error.required).toEqual(['code', 'message', 'status']);
    expect(document.paths['/gemini/v1beta/models'].get.responses['200'].content['application/json'].schema.required).toEqual(['models']);
    expect(document.paths['/gemini/v1beta/models/{path}'].get.summary).toContain('404 NOT_FOUND');
  });
});
