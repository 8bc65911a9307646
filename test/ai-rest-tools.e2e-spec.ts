/**
 * /v1/generate with messages, tools, tool choice, response format, images, seed and penalties, against the
 * Ollama emulator: what reached the upstream in Ollama's format, the answer's tool_calls and finish reason,
 * tool_call events when streaming, the fallback switch's alias, and 400s naming the field.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-rest-tools';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const weather = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

let ollama: OllamaEmulator;
let apps: TestApps;
let app: NestFastifyApplication;

beforeAll(async () => {
  ollama = await startOllamaEmulator();
  apps = new TestApps('tollgate-rest-tools-', { API_TOKEN: TOKEN });
  app = await apps.build(`version: 1\nai: { retry_attempts: 0 }\nproviders:\n  ollama: { url: "${ollama.url}", chat_model: llama3.2 }\n`);
});

afterAll(async () => {
  await apps.close();
  await ollama.close();
});

beforeEach(() => {
  ollama.server.reset();
  ollama.options.toolCalls = undefined;
});

const post = (body: unknown) => app.inject({ method: 'POST', url: '/v1/generate', headers: auth, payload: JSON.stringify(body) });
const sent = () => ollama.server.requestsTo('/api/chat').at(-1)?.body as Record<string, unknown>;

function expect400(response: { statusCode: number; json(): unknown }, says: string) {
  expect(response.statusCode).toBe(400);
  expect((response.json() as { error: { message: string } }).error.message).toContain(says);
}

describe('/v1/generate with messages and tools', () => {
  it('sends messages, tools, format, seed and penalties in Ollama\'s shape and answers tool_calls', async () => {
    ollama.options.toolCalls = [{ name: 'get_weather', arguments: { city: 'Paris' } }];
    const response = await post({
      messages: [
        { role: 'system', content: 'Use tools.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      ],
      tools: [weather],
      tool_choice: 'auto',
      response_format: { type: 'json_object' },
      seed: 3,
      frequency_penalty: 0,
      presence_penalty: 0.2,
    });

    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      finish_reason: 'tool_calls',
      tool_calls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    expect(sent()).toEqual({
      model: 'llama3.2',
      messages: [
        { role: 'system', content: 'Use tools.' },
        { role: 'user', content: 'Weather?' },
      ],
      stream: false,
      tools: [weather],
      format: 'json',
      options: { seed: 3, frequency_penalty: 0, presence_penalty: 0.2 },
    });
  });

  it('sends a tool round trip and a base64 image (to a vision model)', async () => {
    const response = await post({
      model: 'ollama/qwen2.5:7b',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c2', content: 'weather service down', is_error: true },
      ],
      tools: [weather],
    });
    expect(response.statusCode).toBe(200);
    // Ollama has no error flag: a failed tool's result goes as its text (docs/decisions.md B13).
    expect(sent().messages).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: {} } }] },
      { role: 'tool', content: 'sunny', tool_name: 'get_weather' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: {} } }] },
      { role: 'tool', content: 'weather service down', tool_name: 'get_weather' },
    ]);

    const image = await post({
      model: 'ollama/llava',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }],
    });
    // The emulator has not pulled llava: a 404 upstream proves the image request got through the capability check.
    expect(image.statusCode).toBe(422);
    expect(ollama.server.requestsTo('/api/chat').at(-1)?.body).toMatchObject({ messages: [{ images: ['iVBORw0KGgo='] }] });
  });

  it('refuses an image for a model family without vision, naming the capability', async () => {
    const response = await post({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.type).toBe('capability_not_supported');
    expect(ollama.server.requestsTo('/api/chat')).toHaveLength(0);
  });

  it('streams tool calls as tool_call events, then done with finish_reason tool_calls', async () => {
    ollama.options.toolCalls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: {} },
    ];
    const response = await post({ messages: [{ role: 'user', content: 'Weather?' }], tools: [weather], stream: true });
    expect(response.statusCode).toBe(200);
    const events = response.body
      .trim()
      .split('\n\n')
      .map((frame) => ({ event: /event: (.*)/.exec(frame)![1], data: JSON.parse(/data: (.*)/.exec(frame)![1]) }));
    expect(events.filter((e) => e.event === 'tool_call').map((e) => e.data)).toEqual([
      { index: 0, id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { index: 1, id: 'call_1', name: 'get_weather', arguments: '{}' },
    ]);
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'tool_calls' } });
  });

  it.each([
    [{ prompt: 'x', messages: [{ role: 'user', content: 'x' }] }, 'either prompt or messages'],
    [{}, 'prompt'],
    [{ messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
    [{ messages: [{ role: 'tool', tool_call_id: 'c1', content: 'x', is_error: 'yes' }] }, 'messages[0].is_error'],
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x' } }] }] }, 'messages[0].content[0].image_url.url'],
    [{ prompt: 'x', tools: [{ type: 'function', function: {} }] }, 'tools[0].function.name'],
    [{ prompt: 'x', tool_choice: 'sometimes' }, 'tool_choice'],
    [{ prompt: 'x', response_format: { type: 'yaml' } }, 'response_format.type'],
    [{ prompt: 'x', seed: 1.5 }, 'seed'],
    [{ prompt: 'x', presence_penalty: 3 }, 'presence_penalty'],
    [{ prompt: 'x', tools: [weather], tool_choice: 'required' }, 'tool_choice'],
    [{ prompt: 'x', enable_fallback: true, fallback: false }, 'enable_fallback'],
  ])('answers 400 naming the field for %j', async (body, says) => {
    expect400(await post(body), says);
  });

  it('takes model as provider/model, keeping other slashes in the model name', async () => {
    expect((await post({ prompt: 'x', model: 'ollama/qwen2.5:7b' })).statusCode).toBe(200);
    expect(sent().model).toBe('qwen2.5:7b');
    // Any other slash is part of a model name, which no provider is configured with: 404 before any upstream call.
    const before = ollama.server.requests.length;
    expect((await post({ prompt: 'x', model: 'library/llama3.2' })).statusCode).toBe(404);
    expect(ollama.server.requests).toHaveLength(before);
    expect400(await post({ prompt: 'x', model: 'ollama/' }), "model names provider 'ollama'");
  });

  it('accepts fallback as the alias of enable_fallback', async () => {
    expect((await post({ prompt: 'x', fallback: false })).statusCode).toBe(200);
  });
});
