/**
 * Gemini's API at /gemini/v1beta on the wire (issue 28, surface 3): generateContent, streamGenerateContent,
 * countTokens and the model list in Google's shapes, routed by the path's model to the Gemini and the OpenAI
 * emulators, with the key in x-goog-api-key or ?key=, errors as Google's `{error: {code, message, status}}` and
 * governance (allow-lists, a spent budget, the ledger's route) as on /openai/v1. The official client's view is
 * in gemini-genai-sdk.e2e-spec.ts.
 */
import { Client } from 'pg';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { EMULATOR_THOUGHT_SIGNATURE, GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-gemini-surface';
const ADMIN_TOKEN = 'admin-token-for-gemini-surface';
const UPSTREAM_KEY = 'sk-emulator-gemini-surface';
const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `gemini_surface_e2e_${process.pid}`;

type Json = Record<string, any>;

let apps: TestApps;
let gemini: GeminiEmulator;
let openai: OpenAiEmulator;
let base: string;
let origin: string;

beforeAll(async () => {
  gemini = await startGeminiEmulator({ signFunctionCalls: true });
  openai = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY });
  apps = new TestApps('tollgate-gemini-surface-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      `api: { token: "${TOKEN}" }`,
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: gemini, model_aliases: { fast: [openai/gpt-test] } }',
      'providers:',
      `  gemini: { url: "${gemini.url}", api_key: "${GEMINI_EMULATOR_KEY}", chat_model: gemini-2.5-flash, timeout: 5 }`,
      `  openai: { url: "${openai.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 5 }`,
      'governance:',
      `  admin_token: "${ADMIN_TOKEN}"`,
      `  ledger: { store: postgres, url: "${PG_URL}", table: ${TABLE}, flush_interval: 1 }`,
      '',
    ].join('\n'),
  ));
  base = `${origin}/gemini/v1beta`;
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([gemini?.close(), openai?.close()]);
  const sql = new Client({ connectionString: PG_URL });
  await sql.connect();
  await sql.query(`DROP TABLE IF EXISTS ${TABLE} CASCADE`);
  await sql.query(`DROP TABLE IF EXISTS ${TABLE}_daily CASCADE`);
  await sql.end();
});

beforeEach(() => {
  gemini.server.reset();
  gemini.options.functionCalls = undefined;
  gemini.options.streamErrorCode = undefined;
  gemini.options.thoughtsTokens = undefined;
});

function post(path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': TOKEN }): Promise<Response> {
  return fetch(`${base}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function createKey(settings: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${origin}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 't-gemini', ...settings }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

const hello = { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] };
const weather = {
  functionDeclarations: [
    { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } },
  ],
};

/** The `data:` events of an SSE body, parsed. */
function sseEvents(text: string): Json[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Json);
}

describe('generateContent', () => {
  it('routes `provider/model` in the path (slash as sent or %2F) to the OpenAI emulator and answers a GenerateContentResponse', async () => {
    for (const model of ['openai/gpt-test', 'openai%2Fgpt-test']) {
      const response = await post(`models/${model}:generateContent`, {
        ...hello,
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: { temperature: 0.5, topP: 0.9, topK: 40, maxOutputTokens: 64, stopSequences: ['END'], candidateCount: 1, thinkingConfig: { thinkingBudget: 0 } },
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Json;
      expect(body).toMatchObject({
        candidates: [{ content: { role: 'model', parts: [{ text: 'echo: Hello' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: expect.any(Number), candidatesTokenCount: expect.any(Number), totalTokenCount: expect.any(Number) },
        modelVersion: 'openai/gpt-test',
        responseId: expect.any(String),
      });
    }
    const sent = openai.server.requests.filter((request) => request.path.endsWith('/chat/completions')).at(-1)!.body as Json;
    expect(sent).toMatchObject({ model: 'gpt-test', temperature: 0.5, top_p: 0.9, stop: ['END'], messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] });
    // Gemini CLI sends topK on every turn: a target without top-k leaves it out rather than refusing the call.
    expect(sent).not.toHaveProperty('top_k');
  });

  it('sends topK on to a Gemini target', async () => {
    const response = await post('models/gemini-2.5-flash:generateContent', { ...hello, generationConfig: { topK: 64 } });
    expect(response.status).toBe(200);
    expect((gemini.server.requests.at(-1)!.body as Json).generationConfig).toMatchObject({ topK: 64 });
  });

  it('routes an alias and a configured model plain, and takes the key in ?key=', async () => {
    const aliased = await post('models/fast:generateContent', hello);
    expect(((await aliased.json()) as Json).modelVersion).toBe('openai/gpt-test');
    const configured = await post(`models/gemini-2.5-flash:generateContent?key=${TOKEN}`, hello, {});
    expect(configured.status).toBe(200);
    expect(((await configured.json()) as Json).modelVersion).toBe('gemini/gemini-2.5-flash');
  });

  it('takes images inline, maps usage with thoughts apart, and answers JSON for responseSchema', async () => {
    gemini.options.thoughtsTokens = 5;
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const response = await post('models/gemini/gemini-2.5-flash:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: png } }] }],
    });
    const body = (await response.json()) as Json;
    expect(body.usageMetadata).toMatchObject({ thoughtsTokenCount: 5 });
    const native = gemini.server.requests.at(-1)!.body as Json;
    expect(native.contents[0].parts[1]).toEqual({ inlineData: { mimeType: 'image/png', data: png } });

    const structured = await post('models/openai/gpt-test:generateContent', {
      ...hello,
      generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } },
    });
    const text = ((await structured.json()) as Json).candidates[0].content.parts[0].text as string;
    expect(JSON.parse(text)).toEqual({ city: expect.any(String) });
    const sent = openai.server.requests.at(-1)!.body as Json;
    expect(sent.response_format).toMatchObject({ type: 'json_schema', json_schema: { schema: { type: 'object', properties: { city: { type: 'string' } } } } });
  });

  it('runs a function-calling loop on a signing Gemini model, the thoughtSignature going out and coming back', async () => {
    const first = (await (await post('models/gemini-2.5-flash:generateContent', { ...hello, tools: [weather], toolConfig: { functionCallingConfig: { mode: 'ANY' } } })).json()) as Json;
    const call = first.candidates[0].content.parts[0];
    expect(call).toEqual({ functionCall: { name: 'get_weather', args: expect.any(Object) }, thoughtSignature: EMULATOR_THOUGHT_SIGNATURE });
    expect(first.candidates[0].finishReason).toBe('STOP');
    const second = await post('models/gemini-2.5-flash:generateContent', {
      contents: [...hello.contents, { role: 'model', parts: [call] }, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }] }],
      tools: [weather],
    });
    expect(second.status).toBe(200);
    const native = gemini.server.requests.at(-1)!.body as Json;
    expect(native.contents[1].parts[0]).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: EMULATOR_THOUGHT_SIGNATURE });
    expect(native.contents[2].parts[0]).toEqual({ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } });
  });

  it('runs a function-calling loop on an OpenAI model: ANY with one allowed name forces that function', async () => {
    const first = (await (await post('models/openai/gpt-test:generateContent', {
      ...hello,
      tools: [{ functionDeclarations: [...weather.functionDeclarations, { name: 'get_time', parametersJsonSchema: { type: 'object', properties: {} } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    })).json()) as Json;
    expect(first.candidates[0].content.parts).toEqual([{ functionCall: { name: 'get_weather', args: expect.any(Object) } }]);
    const sent = openai.server.requests.at(-1)!.body as Json;
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(sent.tools.map((tool: Json) => tool.function.name)).toEqual(['get_weather']);
    const second = (await (await post('models/openai/gpt-test:generateContent', {
      contents: [...hello.contents, first.candidates[0].content, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }] }],
      tools: [weather],
    })).json()) as Json;
    expect(second.candidates[0].content.parts[0].text).toBe('tool said: {"output":"sunny"}');
  });
});

describe('streamGenerateContent', () => {
  it('sends data: chunks, the text incrementally and finishReason and usageMetadata on the last', async () => {
    const response = await post('models/openai/gpt-test:streamGenerateContent?alt=sse', hello);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(await response.text());
    expect(events.length).toBeGreaterThan(1);
    expect(events.map((event) => event.candidates[0].content.parts.map((part: Json) => part.text ?? '').join('')).join('')).toBe('echo: Hello');
    expect(events.at(-1)).toMatchObject({ candidates: [{ finishReason: 'STOP' }], usageMetadata: { totalTokenCount: expect.any(Number) }, modelVersion: 'openai/gpt-test' });
  });

  it('sends a function call whole in one part', async () => {
    const events = sseEvents(await (await post('models/gemini-2.5-flash:streamGenerateContent?alt=sse', { ...hello, tools: [weather] })).text());
    const calls = events.flatMap((event) => event.candidates[0].content.parts.filter((part: Json) => part.functionCall));
    expect(calls).toEqual([{ functionCall: { name: 'get_weather', args: expect.any(Object) }, thoughtSignature: EMULATOR_THOUGHT_SIGNATURE }]);
  });

  it('ends with an error chunk, never a silent close, when the upstream fails mid-stream', async () => {
    gemini.options.streamErrorCode = 503;
    const response = await post('models/gemini-2.5-flash:streamGenerateContent?alt=sse', hello);
    expect(response.status).toBe(200);
    const events = sseEvents(await response.text());
    expect(events.at(-1)).toEqual({ error: { code: expect.any(Number), message: expect.any(String), status: expect.stringMatching(/^[A-Z_]+$/) } });
    expect(JSON.stringify(events.at(-1))).not.toContain('gemini-upstream-body');
  });

  it('answers the JSON array form without alt=sse', async () => {
    const body = (await (await post('models/openai/gpt-test:streamGenerateContent', hello)).json()) as Json[];
    expect(body).toEqual([expect.objectContaining({ candidates: [expect.objectContaining({ finishReason: 'STOP' })] })]);
  });
});

describe('countTokens and models', () => {
  it('estimates the tokens of contents for any target', async () => {
    const response = await post('models/openai/gpt-test:countTokens', { contents: [{ role: 'user', parts: [{ text: 'x'.repeat(400) }] }] });
    expect(await response.json()).toEqual({ totalTokens: 104 });
  });

  it('lists the models in Google\'s shape, filtered by the caller\'s allow-list, and answers one model', async () => {
    const all = (await (await fetch(`${base}/models`, { headers: { 'x-goog-api-key': TOKEN } })).json()) as Json;
    const names = all.models.map((model: Json) => model.name);
    expect(names).toEqual(expect.arrayContaining(['models/openai/gpt-test', 'models/gemini/gemini-2.5-flash', 'models/fast']));
    expect(all.models[0].supportedGenerationMethods).toEqual(['generateContent', 'streamGenerateContent', 'countTokens']);
    const key = await createKey({ name: 'list', models: ['openai/*'] });
    const allowed = (await (await fetch(`${base}/models`, { headers: { 'x-goog-api-key': key } })).json()) as Json;
    expect(allowed.models.map((model: Json) => model.name)).toEqual(expect.arrayContaining(['models/openai/gpt-test']));
    expect(allowed.models.some((model: Json) => model.name.startsWith('models/gemini/'))).toBe(false);
    const one = await fetch(`${base}/models/openai/gpt-test`, { headers: { 'x-goog-api-key': TOKEN } });
    expect(await one.json()).toMatchObject({ name: 'models/openai/gpt-test', supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'] });
  });
});

describe('errors in Google\'s shape', () => {
  it('401 UNAUTHENTICATED without a key or with a wrong one, in the header or the query', async () => {
    for (const response of [await post('models/fast:generateContent', hello, {}), await post('models/fast:generateContent?key=wrong', hello, {})]) {
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: { code: 401, message: expect.any(String), status: 'UNAUTHENTICATED' } });
    }
  });

  it('400 INVALID_ARGUMENT naming the field', async () => {
    const unknown = await post('models/fast:generateContent', { ...hello, generationConfig: { temprature: 1 } });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: { code: 400, message: expect.stringContaining('"temprature"'), status: 'INVALID_ARGUMENT' } });
    const pdf = await post('models/fast:generateContent', { contents: [{ parts: [{ inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } }] }] });
    expect(((await pdf.json()) as Json).error.message).toContain('contents[0].parts[0].inlineData.mimeType');
  });

  it('404 NOT_FOUND for an unknown model or path', async () => {
    const model = await post('models/nobody/nothing:generateContent', hello);
    expect(model.status).toBe(404);
    expect(((await model.json()) as Json).error.status).toBe('NOT_FOUND');
    const path = await fetch(`${base}/nothing-here`, { headers: { 'x-goog-api-key': TOKEN } });
    expect(await path.json()).toEqual({ error: { code: 404, message: expect.any(String), status: 'NOT_FOUND' } });
  });

  it('403 PERMISSION_DENIED for a model the key may not use', async () => {
    const key = await createKey({ name: 'narrow', models: ['openai/*'] });
    const response = await post('models/gemini-2.5-flash:generateContent', hello, { 'x-goog-api-key': key });
    expect(response.status).toBe(403);
    expect(((await response.json()) as Json).error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });
  });

  it('429 RESOURCE_EXHAUSTED with a QuotaFailure naming the day and x-should-retry: false for a spent budget', async () => {
    const key = await createKey({ name: 'spent', budget_tokens: 1, period: 'day' });
    const response = await post('models/fast:generateContent', hello, { 'x-goog-api-key': key });
    expect(response.status).toBe(429);
    expect(response.headers.get('x-should-retry')).toBe('false');
    const error = ((await response.json()) as Json).error;
    expect(error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(error.details).toEqual(
      expect.arrayContaining([
        { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [expect.objectContaining({ quotaId: expect.stringContaining('PerDay') })] },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: expect.stringMatching(/^\d+s$/) },
      ]),
    );
  });
});

describe('the ledger', () => {
  it('records a call of the surface with its route', async () => {
    const key = await createKey({ name: 'ledger' });
    expect((await post('models/fast:generateContent', hello, { 'x-goog-api-key': key })).status).toBe(200);
    const sql = new Client({ connectionString: PG_URL });
    await sql.connect();
    try {
      let rows: Json[] = [];
      for (let attempt = 0; attempt < 50 && rows.length === 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        rows = (await sql.query(`SELECT route, provider, model, tenant FROM ${TABLE} WHERE tenant = 't-gemini'`).catch(() => ({ rows: [] }))).rows;
      }
      expect(rows).toEqual([{ route: '/gemini/v1beta/models/*', provider: 'openai', model: 'gpt-test', tenant: 't-gemini' }]);
    } finally {
      await sql.end();
    }
  });
});
