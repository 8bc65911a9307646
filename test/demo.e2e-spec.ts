/**
 * `npm run demo` (node dist/src/demo/main.js) as a subprocess on a free port: the curl command it prints is run
 * as printed, and the `openai` npm client talks to it as its snippet says; every answer is labelled [demo].
 * What the demo advertises holds through real clients: tool calls, JSON for a schema, images, every dialect, and
 * the printed demo key's budget spent to a 429 by the printed curl loop.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { GoogleGenAI } from '@google/genai';
import { generateObject } from 'ai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { getGlobalDispatcher } from 'undici';
import { z } from 'zod';
import { type DemoProcess, startDemo } from './support/demo-process';

let demo: DemoProcess;
let output: string;
let origin: string;

beforeAll(async () => {
  // The caller's provider keys and API token must not change the demo.
  demo = await startDemo({ API_TOKEN: 'not-the-demo-token', OPENAI_API_KEY: 'sk-ignored' });
  ({ output, origin } = demo);
}, 120_000);

afterAll(() => demo.stop());

describe('npm run demo', () => {
  it('prints the curl command of the brief for its port, and that command gets a labelled answer', () => {
    const curl = output.split('\n').find((line) => line.startsWith('curl '));
    expect(curl).toBe(
      `curl -s ${origin}/openai/v1/chat/completions -H 'Authorization: Bearer demo-token' -H 'Content-Type: application/json' ` +
        `-d '{"model":"demo/demo-chat","messages":[{"role":"user","content":"Hello"}]}'`,
    );
    const run = spawnSync('sh', ['-c', curl!], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(0);
    const body = JSON.parse(run.stdout);
    expect(body).toMatchObject({ object: 'chat.completion', model: 'demo/demo-chat' });
    expect(body.choices[0].message.content).toMatch(/^\[demo\] .*You said: Hello$/);
  });

  it('prints its instructions after its start-up lines, not among them', () => {
    const instructions = output.indexOf('Tollgate demo on ');
    expect(output.indexOf('"msg":"listening on ')).toBeGreaterThan(-1);
    expect(output.indexOf('"msg":"listening on ')).toBeLessThan(instructions);
    expect(output.slice(instructions)).not.toContain('"context":"RouterExplorer"');
  });

  it('answers the openai npm client as its snippet says: chat, streaming, embeddings and models, all labelled', async () => {
    expect(output).toContain(`new OpenAI({ baseURL: '${origin}/openai/v1', apiKey: 'demo-token' })`);
    const client = new OpenAI({ baseURL: `${origin}/openai/v1`, apiKey: 'demo-token', maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'demo/demo-chat', messages: [{ role: 'user', content: 'Hi there' }] });
    expect(completion.choices[0].message.content).toMatch(/^\[demo\] .*You said: Hi there$/);

    const stream = await client.chat.completions.create({ model: 'demo/demo-chat', messages: [{ role: 'user', content: 'Stream' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toMatch(/^\[demo\] .*You said: Stream$/);

    const embedding = await client.embeddings.create({ model: 'demo/demo-embed', input: ['one', 'one'] });
    expect(embedding.data).toHaveLength(2);
    expect(embedding.data[0].embedding).toHaveLength(8);
    expect(embedding.data[0].embedding).toEqual(embedding.data[1].embedding);

    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['demo/demo-chat', 'demo/demo-embed']);
  });

  it('takes only the demo token, whatever API_TOKEN says', async () => {
    const wrong = new OpenAI({ baseURL: `${origin}/openai/v1`, apiKey: 'not-the-demo-token', maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 });
  });
});

/** One 1x1 PNG: 70 bytes. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', minLength: 6 }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1 }, note: { type: 'string' } },
      required: ['city', 'unit', 'days'],
      additionalProperties: false,
    },
  },
};
const openai = () => new OpenAI({ baseURL: `${origin}/openai/v1`, apiKey: 'demo-token', maxRetries: 0 });

describe('what the demo advertises', () => {
  it('calls a forced tool with arguments its schema admits, and answers the tool result in text, through the openai client', async () => {
    const client = openai();
    const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
    const first = await client.chat.completions.create({ model: 'demo/demo-chat', messages: [question], tools: [weatherTool], tool_choice: 'required' });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');
    const args = JSON.parse(call.function.arguments);
    expect(args).toEqual({ city: expect.stringMatching(/^.{6,}$/), unit: 'celsius', days: 1 });

    const second = await client.chat.completions.create({
      model: 'demo/demo-chat',
      messages: [question, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '21 degrees' }],
      tools: [weatherTool],
    });
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(second.choices[0].message.content).toBe('[demo] The tool get_weather returned: 21 degrees');
  });

  it('calls a tool the prompt names under tool_choice auto, streamed, and leaves the tools alone when the prompt does not', async () => {
    const client = openai();
    const stream = await client.chat.completions.create({ model: 'demo/demo-chat', messages: [{ role: 'user', content: 'Please use get weather for Oslo' }], tools: [weatherTool], stream: true });
    let name = '';
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      name += delta?.tool_calls?.[0]?.function?.name ?? '';
      args += delta?.tool_calls?.[0]?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect({ name, finish }).toEqual({ name: 'get_weather', finish: 'tool_calls' });
    expect(JSON.parse(args)).toMatchObject({ unit: 'celsius', days: 1 });

    const plain = await client.chat.completions.create({ model: 'demo/demo-chat', messages: [{ role: 'user', content: 'Hello' }], tools: [weatherTool] });
    expect(plain.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(plain.choices[0].message.content).toMatch(/^\[demo\] .*You said: Hello$/);
  });

  it('answers JSON that fits a zod schema, for the openai client\'s parse and the ai SDK\'s generateObject', async () => {
    const Recipe = z.object({ title: z.string(), servings: z.number().int().min(2), tags: z.array(z.string()), vegan: z.boolean(), course: z.enum(['main', 'dessert']) });
    const parsed = await openai().chat.completions.parse({
      model: 'demo/demo-chat',
      messages: [{ role: 'user', content: 'A recipe, please' }],
      response_format: zodResponseFormat(Recipe, 'recipe'),
    });
    expect(parsed.choices[0].message.parsed).toEqual({ title: 'demo', servings: 2, tags: [], vegan: false, course: 'main' });

    // The ai SDK's default OpenAI provider calls /responses, so this is the Responses dialect's text.format too.
    const provider = createOpenAI({ baseURL: `${origin}/openai/v1`, apiKey: 'demo-token' });
    const { object } = await generateObject({ model: provider('demo/demo-chat'), schema: Recipe, prompt: 'A recipe, please', maxRetries: 0 });
    expect(Recipe.parse(object)).toEqual(object);
  });

  it('tells an image\'s media type and size, or its URL\'s host, instead of [object Object]', async () => {
    const answer = await openai().chat.completions.create({
      model: 'demo/demo-chat',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'image_url', image_url: { url: 'https://images.example.org/cat.jpg' } },
          ],
        },
      ],
    });
    expect(answer.choices[0].message.content).toBe(
      "[demo] Tollgate's built-in demo provider answering, not a language model. You said: What is this? (and an image: image/png, 70 bytes) (and an image: at images.example.org)",
    );
  });

  it('answers one request on each dialect: /v1, Chat Completions, Responses, Anthropic Messages and Gemini', async () => {
    const v1 = await fetch(`${origin}/v1/generate`, {
      method: 'POST',
      headers: { authorization: 'Bearer demo-token', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/demo-chat', prompt: 'Hi v1' }),
    });
    expect(v1.status).toBe(200);
    expect(((await v1.json()) as { response: string }).response).toMatch(/^\[demo\] .*Hi v1/);

    const chat = await openai().chat.completions.create({ model: 'demo/demo-chat', messages: [{ role: 'user', content: 'Hi chat' }] });
    expect(chat.choices[0].message.content).toMatch(/^\[demo\] .*You said: Hi chat$/);

    const response = await openai().responses.create({ model: 'demo/demo-chat', input: 'Hi responses' });
    expect(response.output_text).toMatch(/^\[demo\] .*You said: Hi responses$/);

    const anthropic = new Anthropic({ baseURL: `${origin}/anthropic`, apiKey: 'demo-token', maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: 'demo/demo-chat',
      max_tokens: 200,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Hi anthropic' }],
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'demo' } });

    // @google/genai dispatches through Node's global undici dispatcher, which a jest sandbox has only once undici set it.
    getGlobalDispatcher();
    const gemini = new GoogleGenAI({ apiKey: 'demo-token', httpOptions: { baseUrl: `${origin}/gemini` } });
    const content = await gemini.models.generateContent({
      model: 'demo/demo-chat',
      contents: [{ role: 'user', parts: [{ text: 'Hi gemini' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }],
    });
    expect(content.text).toBe("[demo] Tollgate's built-in demo provider answering, not a language model. You said: Hi gemini (and an image: image/png, 70 bytes)");
  });
});

describe('the coding CLIs as docs/clients.md runs them', () => {
  /** A request as the CLI sent it to `npm run demo` (test/fixtures/clients/), with the key in the CLI's header. */
  function replay(fixture: string, keyHeader: Record<string, string>): Promise<Response> {
    const request = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'clients', fixture), 'utf8')) as { method: string; path: string; headers: Record<string, string>; body: unknown };
    return fetch(`${origin}${request.path}`, { method: request.method, headers: { ...request.headers, ...keyHeader }, body: JSON.stringify(request.body) });
  }

  /** The `data:` payloads of an SSE body. */
  async function events(response: Response): Promise<Array<Record<string, any>>> {
    const text = await response.text();
    return text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
  }

  const SAY_HELLO = "[demo] Tollgate's built-in demo provider answering, not a language model. You said: Say hello";

  it("answers Claude Code 2.1.332's turn (adaptive thinking with display, its tools and agents in a system message after the prompt) with the prompt", async () => {
    const response = await replay('claude-code-2.1.332-demo-turn.json', { 'x-api-key': 'demo-token' });
    expect(response.status).toBe(200);
    const text = (await events(response)).flatMap((event) => (event.delta?.type === 'text_delta' ? [event.delta.text] : [])).join('');
    expect(text).toBe(SAY_HELLO);
  });

  it("answers Gemini CLI 0.61.0's turn (its session context in the prompt's content) with the prompt", async () => {
    const response = await replay('gemini-cli-0.61.0-demo-turn.json', { 'x-goog-api-key': 'demo-token' });
    expect(response.status).toBe(200);
    const text = (await events(response)).flatMap((event) => event.candidates?.[0]?.content?.parts ?? []).map((part: { text?: string }) => part.text ?? '').join('');
    expect(text).toBe(SAY_HELLO);
  });

  it("refuses Claude Code's turn on the demo key: more than its 100 tokens, 429 with x-should-retry: false", async () => {
    const key = /the API key (tg_\S+) \(tenant demo\)/.exec(output)?.[1];
    const response = await replay('claude-code-2.1.332-demo-turn.json', { 'x-api-key': key! });
    expect(response.status).toBe(429);
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect(await response.json()).toMatchObject({ error: { type: 'rate_limit_error', message: expect.stringMatching(/^This call's estimate \(\d+ tokens\) is more than the 100 left of the daily token budget/) } });
  });
});

describe('the demo key', () => {
  it('is printed with its budget, the usage page and a curl loop that spends the budget to a 429 budget_exceeded', async () => {
    const key = /the API key (tg_\S+) \(tenant demo\) may spend 100 tokens a day/.exec(output)?.[1];
    expect(key).toBeDefined();
    expect(output).toContain(`What it spent: ${origin}/usage (paste the key).`);
    const loop = output.split('\n').find((line) => line.startsWith('for i in '));
    expect(loop).toContain(`Authorization: Bearer ${key}`);
    const run = spawnSync('sh', ['-c', loop!], { encoding: 'utf8', timeout: 30_000 });
    expect(run.stdout.trim().split('\n')).toEqual(['200', '200', '200', '429']);

    const refused = await new OpenAI({ baseURL: `${origin}/openai/v1`, apiKey: key!, maxRetries: 0 }).chat.completions
      .create({ model: 'demo/demo-chat', messages: [{ role: 'user', content: 'Hello' }] })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 429, code: 'budget_exceeded' });

    const usage = await fetch(`${origin}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await usage.json()) as { totals: { calls: number } }).totals.calls).toBe(3);
    expect((await fetch(`${origin}/usage`)).status).toBe(200);
  });
});
