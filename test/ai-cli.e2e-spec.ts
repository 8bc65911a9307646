/**
 * The AI commands of the real CLI (node dist/src/cli.js) as subprocesses against loopback emulators:
 * output in both formats, every option, stdin input, exit codes and `tollgate: <message>` errors.
 * Subprocesses run asynchronously so the emulators in this process keep answering.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_SCHEMA_MODELINE } from '../src/config/config-schema.validator';
import { type OpenAiEmulator, UPSTREAM_MARKER, vectorFor } from './emulators/openai-emulator';
import { buildDistIfStale, expectNoLeak, runCli } from './support/cli-run';
import { OpenAiPair } from './support/openai-pair';

const KEY = 'sk-cli-test-KEY-7781';
const SECRETS = [KEY, UPSTREAM_MARKER];

let work: string;
let pair: OpenAiPair;
let openai: OpenAiEmulator;
let deepseek: OpenAiEmulator;

/** The CLI in the scratch directory, with both emulators registered unless `env` says otherwise. */
const tollgate = (args: string[], env: NodeJS.ProcessEnv = pair.env(), stdin?: string) => runCli(args, { cwd: work, env, stdin });

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-ai-cli-'));
  pair = await OpenAiPair.start(KEY);
  ({ openai, deepseek } = pair);
}, 120_000);

afterAll(async () => {
  await pair.close();
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => pair.reset());

describe('tollgate providers', () => {
  it('lists registrations in order with the default marked, never the key', async () => {
    const run = await tollgate(['providers']);
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^openai \(openai\) \[default\]  url http:\/\/127\.0\.0\.1:\d+\/v1  chat gpt-test  embeddings embed-test$/);
    expect(lines[1]).toMatch(/^deepseek \(deepseek\)  url .*  chat deepseek-chat  no embeddings$/);
    expectNoLeak(run, SECRETS);
  });

  it('--format json gives the same shape as GET /v1/providers', async () => {
    const run = await tollgate(['providers', '--format', 'json']);
    expect(run.status).toBe(0);
    const body = JSON.parse(run.stdout);
    expect(body.default_provider).toBe('openai');
    expect(body.providers[1]).toMatchObject({ name: 'deepseek', kind: 'deepseek', capabilities: { embeddings: false } });
    expectNoLeak(run, SECRETS);
  });

  it('registers only the local default when no key is in the environment', async () => {
    const run = await tollgate(['providers'], {});
    expect(run.stdout).toBe('ollama (ollama) [default]  url http://localhost:11434  chat llama3.2  embeddings nomic-embed-text\n');
  });
});

describe('tollgate models', () => {
  it('lists provider/model lines for every provider, the data of GET /v1/models', async () => {
    const run = await tollgate(['models']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('openai/gpt-test\nopenai/embed-test\ndeepseek/deepseek-chat\n');
    expect(openai.server.requestsTo('/v1/models')).toHaveLength(1);
    expect(deepseek.server.requestsTo('/models')).toHaveLength(1);
  });

  it('--provider lists one; --json (same as --format json) gives the /v1/models body', async () => {
    const one = await tollgate(['models', '--provider', 'deepseek', '--json']);
    expect(one.status).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual({ models: [{ id: 'deepseek-chat', provider: 'deepseek', owned_by: 'emulator' }], errors: [] });
    expect(openai.server.requestsTo('/v1/models')).toHaveLength(0);
    const formatted = await tollgate(['models', '--provider', 'deepseek', '--format', 'json']);
    expect(formatted.stdout).toBe(one.stdout);
  });

  it('exit 1 naming a provider whose listing failed, after listing the others; exit 2 for an unknown provider', async () => {
    deepseek.serverErrorNext(503);
    const run = await tollgate(['models']);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('openai/gpt-test\nopenai/embed-test\n');
    expect(run.stderr).toMatch(/^tollgate: deepseek: .*503.*\n$/);
    expectNoLeak(run, SECRETS);

    const unknown = await tollgate(['models', '--provider', 'nope']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe("tollgate: unknown provider 'nope' (registered: openai, deepseek)\n");
  });
});

describe('tollgate capabilities', () => {
  it('lists what each provider supports, as GET /v1/capabilities', async () => {
    const run = await tollgate(['capabilities']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      'openai (openai): generate, embeddings, batch_embeddings, streaming, list_models, tools, structured_output, vision\n' +
        'deepseek (deepseek): generate, streaming, list_models, tools, structured_output\n',
    );
    const json = JSON.parse((await tollgate(['capabilities', '--provider', 'deepseek', '--json'])).stdout);
    expect(json).toEqual({
      providers: [
        {
          provider: 'deepseek',
          kind: 'deepseek',
          capabilities: {
            generate: true,
            embeddings: false,
            batch_embeddings: false,
            streaming: true,
            list_models: true,
            tools: true,
            structured_output: true,
            vision: false,
          },
        },
      ],
    });
  });
});

describe('tollgate health', () => {
  it('exit 0 when every provider is healthy', async () => {
    const run = await tollgate(['health']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^openai: healthy \(reachable, ready\) model gpt-test [\d.]+ ms\ndeepseek: healthy/);
  });

  it('exit 1 naming the unhealthy provider; --provider checks one; json output', async () => {
    deepseek.serverErrorNext(503);
    const run = await tollgate(['health', '--format', 'json']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('tollgate: not healthy: deepseek\n');
    const body = JSON.parse(run.stdout);
    expect(body.providers[1]).toMatchObject({ provider: 'deepseek', status: 'unhealthy', reachable: true, ready: false });
    expectNoLeak(run, SECRETS);

    const one = await tollgate(['health', '--provider', 'openai']);
    expect(one.status).toBe(0);
    expect(one.stdout).toMatch(/^openai: healthy/);
    expect(one.stdout).not.toContain('deepseek');
  });
});

describe('tollgate generate', () => {
  it('prints the answer for TEXT', async () => {
    const run = await tollgate(['generate', 'Say hi']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('echo: Say hi\n');
    expect(run.stderr).toBe('');
  });

  it('reads TEXT from stdin when no argument is given', async () => {
    const run = await tollgate(['generate', '--format', 'json'], pair.env(), 'from stdin\n');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ response: 'echo: from stdin', provider: 'openai', model: 'gpt-test', finish_reason: 'stop' });
  });

  it('--system-prompt and --prompt-templates-file shape the messages', async () => {
    writeFileSync(join(work, 'prompts.yaml'), 'system_prompt: From the file.\nwithout_context: |\n  Q: {prompt}\n');
    await tollgate(['generate', 'x', '--prompt-templates-file', 'prompts.yaml']);
    expect((openai.server.lastRequest!.body as { messages: unknown }).messages).toEqual([
      { role: 'system', content: 'From the file.' },
      { role: 'user', content: 'Q: x\n' },
    ]);
    await tollgate(['generate', 'y', '--prompt-templates-file', 'prompts.yaml', '--system-prompt', 'Flag wins.']);
    expect((openai.server.lastRequest!.body as { messages: Array<{ content: string }> }).messages[0].content).toBe('Flag wins.');
  });

  it('--provider, --model and --chat-model choose where and what', async () => {
    const run = await tollgate(['generate', 'hi', '--provider', 'deepseek', '--format', 'json']);
    expect(JSON.parse(run.stdout).provider).toBe('deepseek');
    await tollgate(['generate', 'hi', '--chat-model', 'gpt-other']);
    expect((openai.server.lastRequest!.body as { model: string }).model).toBe('gpt-other');
    const model = await tollgate(['generate', 'hi', '--provider', 'openai', '--model', 'missing-model', '--no-fallback']);
    expect(model.status).toBe(1);
    expect(model.stderr).toBe("tollgate: openai: model 'missing-model' is not available (404)\n");
    // A model no provider is configured with, without --provider, is refused before any upstream call.
    openai.server.reset();
    const unknown = await tollgate(['generate', 'hi', '--model', 'missing-model']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/^tollgate: model 'missing-model' is not served by any configured provider/);
    expect(openai.server.requests).toHaveLength(0);
  });

  it('sends --response-format (a JSON Schema file) and --image (a local file, a URL) in the provider format', async () => {
    writeFileSync(join(work, 'city.schema.json'), '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}');
    writeFileSync(join(work, 'dot.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const run = await tollgate(['generate', 'Where is this?', '--response-format', 'city.schema.json', '--image', 'dot.png', '--image', 'https://example.com/a.jpg', '--format', 'json']);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ provider: 'openai', finish_reason: 'stop' });
    const sent = openai.server.requestsTo('/v1/chat/completions').at(-1)?.body as Record<string, unknown>;
    expect(sent.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'city_schema', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    });
    expect(sent.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Where is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw==' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
        ],
      },
    ]);
  });

  it('--tools and --tool-choice send tools in the provider format and print the calls the model asks for, streamed or not', async () => {
    const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
    writeFileSync(join(work, 'tools.json'), JSON.stringify([weather, { name: 'get_time', parameters: { type: 'object', properties: {} } }]));
    const run = await tollgate(['generate', 'Weather in Paris?', '--tools', 'tools.json', '--tool-choice', 'get_weather']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^tool call get_weather \{"city":"[^"]*"\}\n$/);
    const sent = openai.server.requestsTo('/v1/chat/completions').at(-1)?.body as Record<string, unknown>;
    expect(sent.tools).toEqual([weather, { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }]);
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    const streamed = await tollgate(['generate', 'Weather and time?', '--tools', 'tools.json', '--stream']);
    expect(streamed.status).toBe(0);
    expect(streamed.stdout.split('\n').filter(Boolean).map((line) => line.split(' ').slice(0, 3).join(' '))).toEqual(['tool call get_weather', 'tool call get_time']);
    const json = await tollgate(['generate', 'Weather?', '--tools', 'tools.json', '--tool-choice', 'required', '--format', 'json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ finish_reason: 'tool_calls', tool_calls: [expect.objectContaining({ name: 'get_weather' }), expect.objectContaining({ name: 'get_time' })] });
  });

  it('falls back to the next provider, unless --no-fallback', async () => {
    openai.serverErrorNext(503);
    const fallback = await tollgate(['generate', 'hi', '--format', 'json']);
    expect(fallback.status).toBe(0);
    expect(JSON.parse(fallback.stdout).provider).toBe('deepseek');

    deepseek.server.reset();
    openai.serverErrorNext(503);
    const strict = await tollgate(['generate', 'hi', '--no-fallback']);
    expect(strict.status).toBe(1);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toBe('tollgate: openai: upstream returned 503\n');
    expect(deepseek.server.requests).toHaveLength(0);
    expectNoLeak(strict, SECRETS);
  });

  it('--api-key and --api-key-env supply the key for a provider the environment did not register', async () => {
    const env = { OPENAI_URL: openai.url, OPENAI_CHAT_MODEL: 'gpt-test', HIDDEN_KEY: KEY };
    const direct = await tollgate(['generate', 'k1', '--provider', 'openai', '--api-key', KEY], env);
    expect(direct.status).toBe(0);
    const fromEnv = await tollgate(['generate', 'k2', '--provider', 'openai', '--api-key-env', 'HIDDEN_KEY'], env);
    expect(fromEnv.status).toBe(0);
    expect(openai.server.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);

    const wrong = await tollgate(['generate', 'k3', '--provider', 'openai', '--api-key', 'sk-wrong'], env);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toBe('tollgate: openai: upstream rejected the credentials (401)\n');
  });

  it.each([
    [['generate', 'x', '--format', 'xml'], /^tollgate: --format must be one of text, json \(got "xml"\)/],
    [['generate', 'x', '--response-format', 'absent.json'], /^tollgate: --response-format must be text, json_object or a JSON Schema file \(absent.json: no such file\)\n$/],
    [['generate', 'x', '--image', 'notes.txt'], /^tollgate: --image must be an http\(s\) URL or a \.png/],
    [['generate', 'x', '--tools', 'absent.json'], /^tollgate: --tools must be a JSON file of tool definitions \(absent.json: no such file\)\n$/],
    [['generate', 'x', '--tool-choice', 'auto'], /^tollgate: --tool-choice needs --tools\n$/],
    [['generate', 'x', '--tool-choice', 'bad name!'], /^tollgate: --tool-choice must be auto, none, required or a tool name/],
    [['generate', 'x', '--image', 'https://example.com/a.png', '--json-file', 'docs.json'], /^tollgate: --image cannot be combined with --json-file/],
    [['generate', 'x', '--provider', 'ghost'], /^tollgate: unknown provider 'ghost' \(registered: openai, deepseek\)\n$/],
    [['generate', 'x', '--api-key-env', 'NOT_SET_ANYWHERE'], /^tollgate: --api-key-env: environment variable NOT_SET_ANYWHERE is not set\n$/],
    [['generate', 'x', '--api-key-env', 'bad name'], /^tollgate: --api-key-env must be an environment variable name/],
    [['generate', 'x', '--bogus'], /^tollgate: unknown option '--bogus'/],
    [['generate', 'a', 'b'], /^tollgate: too many arguments/],
  ])('usage error %j: exit 2', async (args, message) => {
    const run = await tollgate(args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(openai.server.requests).toHaveLength(0);
  });

  it('empty stdin is a usage error', async () => {
    const run = await tollgate(['generate'], pair.env(), '\n');
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('tollgate: generate: TEXT is empty\n');
  });

  it('an unreachable provider is an operation failure (exit 1)', async () => {
    writeFileSync(join(work, 'no-retry.yaml'), 'version: 1\nai: { retry_attempts: 0 }\n');
    const run = await tollgate(['generate', 'x', '--no-fallback', '--config', 'no-retry.yaml'], { ...pair.env(), OPENAI_URL: 'http://127.0.0.1:9/v1' });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('tollgate: openai: could not reach upstream (ECONNREFUSED)\n');
  });
});

describe('tollgate embed', () => {
  it('prints the vector as one JSON line, or the full result with --format json', async () => {
    const text = await tollgate(['embed', 'vector me']);
    expect(text.status).toBe(0);
    expect(JSON.parse(text.stdout)).toEqual(vectorFor('vector me', 4));
    expect(text.stdout.trim().split('\n')).toHaveLength(1);

    const json = await tollgate(['embed', '--format', 'json'], pair.env(), 'piped');
    expect(JSON.parse(json.stdout)).toEqual({ embedding: vectorFor('piped', 4), provider: 'openai', model: 'embed-test', dimensions: 4 });
  });

  it('--model and --embedding-model pick the embedding model', async () => {
    await tollgate(['embed', 'a', '--embedding-model', 'embed-test']);
    expect((openai.server.lastRequest!.body as { model: string }).model).toBe('embed-test');
    const missing = await tollgate(['embed', 'a', '--model', 'openai/nope-embed', '--no-fallback']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe("tollgate: openai: model 'nope-embed' is not available (404)\n");
    const unknown = await tollgate(['embed', 'a', '--model', 'nope-embed']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/^tollgate: model 'nope-embed' is not served by any configured provider/);
  });

  it('refuses embeddings on a generation-only provider (exit 1)', async () => {
    const run = await tollgate(['embed', 'a', '--provider', 'deepseek']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('tollgate: deepseek: deepseek does not support embeddings\n');
  });
});

describe('tollgate config with the AI sections', () => {
  it('config example starts with the schema line and documents providers, ai, prompts and api', async () => {
    const run = await tollgate(['config', 'example'], {});
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(CONFIG_SCHEMA_MODELINE);
    for (const section of ['ai:', 'providers:', 'prompts:', 'api:']) expect(run.stdout).toMatch(new RegExp(`^${section}`, 'm'));
  });

  it('config validate names the file and the key of an AI problem', async () => {
    writeFileSync(join(work, 'bad-ai.yaml'), 'version: 1\nai: { retry_attempts: many }\nproviders:\n  mine: { chat_model: x }\n');
    const run = await tollgate(['config', 'validate', '--config', 'bad-ai.yaml'], {});
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('tollgate: bad-ai.yaml: ai.retry_attempts: must be an integer\n');
    writeFileSync(join(work, 'bad-kind.yaml'), 'version: 1\nproviders:\n  mine: { chat_model: x }\n');
    const kind = await tollgate(['config', 'validate', '--config', 'bad-kind.yaml'], {});
    expect(kind.status).toBe(1);
    expect(kind.stderr).toMatch(/^tollgate: bad-kind\.yaml: providers\.mine\.kind: is required/);
  });
});
