import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import schema from '../../config/tollgate.schema.json';
import { DEFAULT_EXCLUDED_CONTEXT_FIELDS } from '../ai/prompts/context-rendering';
import { DEFAULT_IMAGE_DOWNLOAD_LIMITS } from '../ai/providers/image-downloads';
import { DEFAULT_AI_SETTINGS } from './ai-config.mapper';
import { problemsOf } from '../../test/support/config-problems';
import { loadConfig } from './config.loader';

describe('AI configuration (ai, providers, prompts, api)', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-ai-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function write(name: string, text: string): string {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return name;
  }

  it('defaults: ollama on its default address, 30 s timeout, 3 retries, 1 s delay, fallback on, token auth', () => {
    const { ai } = loadConfig({ cwd: dir, env: {} });
    expect(ai.providers).toEqual([{ name: 'ollama', kind: 'ollama', timeoutMs: 30_000 }]);
    expect(ai).toMatchObject({
      defaultProvider: 'ollama',
      retryAttempts: 3,
      retryDelayMs: 1000,
      enableFallback: true,
      healthCacheMs: 5000,
      maxBatchInputs: 32,
      responses: { store: 'memory', keyPrefix: 'tollgate:responses:', table: 'tollgate_responses', retentionMs: 3_600_000, maxStored: 10_000 },
      api: { auth: 'token' },
    });
    expect(ai.api.token).toBeUndefined();
  });

  it('ai.responses bounds the stored responses of /openai/v1/responses, retention in seconds', () => {
    writeFileSync(join(dir, 'tollgate.yaml'), 'version: 1\nai:\n  responses: { retention: 90, max_stored: 5 }\n');
    expect(loadConfig({ cwd: dir, env: {}, configPath: 'tollgate.yaml' }).ai.responses).toEqual({ store: 'memory', keyPrefix: 'tollgate:responses:', table: 'tollgate_responses', retentionMs: 90_000, maxStored: 5 });
    writeFileSync(join(dir, 'tollgate.yaml'), 'version: 1\nai:\n  responses: { store: redis, url: "redis://127.0.0.1:6379", key_prefix: "t:" }\n');
    expect(loadConfig({ cwd: dir, env: {}, configPath: 'tollgate.yaml' }).ai.responses).toMatchObject({ store: 'redis', url: 'redis://127.0.0.1:6379', keyPrefix: 't:' });
  });

  it('ai.responses store redis without a url is refused naming the key', () => {
    writeFileSync(join(dir, 'tollgate.yaml'), 'version: 1\nai:\n  responses: { store: redis }\n');
    expect(() => loadConfig({ cwd: dir, env: {}, configPath: 'tollgate.yaml' })).toThrow(/ai\.responses\.url: is required with store: redis/);
  });

  it('ai.responses store postgres takes a postgres:// url and a table; a wrong scheme or a misplaced table is refused naming the key', () => {
    writeFileSync(join(dir, 'tollgate.yaml'), 'version: 1\nai:\n  responses: { store: postgres, url: "postgres://u@db/x", table: my_responses }\n');
    expect(loadConfig({ cwd: dir, env: {}, configPath: 'tollgate.yaml' }).ai.responses).toMatchObject({ store: 'postgres', url: 'postgres://u@db/x', table: 'my_responses' });
    const problems = (yaml: string) => {
      writeFileSync(join(dir, 'tollgate.yaml'), `version: 1\nai:\n  responses: ${yaml}\n`);
      return () => loadConfig({ cwd: dir, env: {}, configPath: 'tollgate.yaml' });
    };
    expect(problems('{ store: postgres }')).toThrow(/ai\.responses\.url: is required with store: postgres/);
    expect(problems('{ store: postgres, url: "redis://127.0.0.1:6379" }')).toThrow(/ai\.responses\.url: must be a postgres:\/\/ URL for store postgres/);
    expect(problems('{ store: redis, url: "redis://127.0.0.1:6379", table: t }')).toThrow(/ai\.responses\.table: applies to store postgres only/);
    expect(problems('{ store: postgres, url: "postgres://u@db/x", table: "drop table" }')).toThrow(/ai\.responses\.table: must be a plain SQL identifier/);
  });

  it('registers a hosted provider from the environment only when its key is set', () => {
    expect(loadConfig({ cwd: dir, env: { OPENAI_CHAT_MODEL: 'gpt-x' } }).ai.providers.map((p) => p.name)).toEqual(['ollama']);
    const { ai } = loadConfig({
      cwd: dir,
      env: { OPENAI_API_KEY: 'sk-1', OPENAI_CHAT_MODEL: 'gpt-x', OPENAI_EMBEDDING_MODEL: 'emb', ANTHROPIC_API_KEY: 'ak', DEEPSEEK_API_KEY: 'dk', DEEPSEEK_EMBEDDING_MODEL: 'ignored' },
    });
    expect(ai.providers).toEqual([
      { name: 'openai', kind: 'openai', apiKey: 'sk-1', chatModel: 'gpt-x', embeddingModel: 'emb', timeoutMs: 30_000 },
      { name: 'anthropic', kind: 'anthropic', apiKey: 'ak', timeoutMs: 30_000 },
      { name: 'deepseek', kind: 'deepseek', apiKey: 'dk', timeoutMs: 30_000 },
    ]);
    // Something is registered, so the local server is not added implicitly; the first one is the default.
    expect(ai.defaultProvider).toBe('openai');
  });

  it('registers ollama from OLLAMA_* and openai_compatible from its URL; _MODEL is the chat model', () => {
    const { ai } = loadConfig({
      cwd: dir,
      env: { OLLAMA_URL: 'http://10.0.0.5:11434', OLLAMA_EMBEDDING_DIMENSIONS: '768', OPENAI_COMPATIBLE_URL: 'http://127.0.0.1:8000/v1', OPENAI_COMPATIBLE_MODEL: 'qwen' },
    });
    expect(ai.providers).toEqual([
      { name: 'ollama', kind: 'ollama', url: 'http://10.0.0.5:11434', embeddingDimensions: 768, timeoutMs: 30_000 },
      { name: 'openai_compatible', kind: 'openai_compatible', url: 'http://127.0.0.1:8000/v1', chatModel: 'qwen', timeoutMs: 30_000 },
    ]);
    expect(ai.defaultProvider).toBe('ollama');
  });

  it('reads YAML with references; environment beats YAML; flags beat environment', () => {
    write(
      'tollgate.yaml',
      [
        'version: 1',
        'ai: { timeout: 10, retry_attempts: 1, retry_delay: 0.25, default_provider: local, fallback_providers: [openai] }',
        'providers:',
        '  local: { kind: openai_compatible, url: "${LOCAL_URL:-http://127.0.0.1:9000/v1}", chat_model: m1, timeout: 2 }',
        '  openai: { api_key_env: MY_OPENAI_KEY, chat_model: yaml-model }',
        'api: { token_env: MY_TOKEN }',
      ].join('\n'),
    );
    const env = { MY_OPENAI_KEY: 'sk-yaml', OPENAI_CHAT_MODEL: 'env-model', MY_TOKEN: 'tok-1' };
    const { ai } = loadConfig({ cwd: dir, env, configPath: 'tollgate.yaml' });
    expect(ai.providers).toEqual([
      { name: 'local', kind: 'openai_compatible', url: 'http://127.0.0.1:9000/v1', chatModel: 'm1', timeoutMs: 2000 },
      { name: 'openai', kind: 'openai', apiKey: 'sk-yaml', chatModel: 'env-model', timeoutMs: 10_000 },
    ]);
    expect(ai).toMatchObject({ defaultProvider: 'local', retryAttempts: 1, retryDelayMs: 250, fallbackProviders: ['openai'], api: { auth: 'token', token: 'tok-1' } });

    const flagged = loadConfig({
      cwd: dir,
      env: { ...env, API_TOKEN: 'tok-env' },
      configPath: 'tollgate.yaml',
      overrides: [{ source: '--chat-model', path: ['providers', 'openai', 'chat_model'], value: 'flag-model' }],
    }).ai;
    expect(flagged.providers[1].chatModel).toBe('flag-model');
    expect(flagged.api.token).toBe('tok-env');
  });

  it('a providers: section names the providers: a key meant for another name fills nothing and adds nothing', () => {
    write('tollgate.yaml', 'version: 1\nproviders:\n  gpt: { kind: openai, api_key_env: OPENAI_API_KEY, chat_model: gpt-x }\n');
    const env = { OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'ak', OLLAMA_URL: 'http://10.0.0.5:11434' };
    const config = loadConfig({ cwd: dir, env, configPath: 'tollgate.yaml' });
    expect(config.ai.providers).toEqual([{ name: 'gpt', kind: 'openai', apiKey: 'sk-1', chatModel: 'gpt-x', timeoutMs: 30_000 }]);
    expect(config.environmentProviders).toEqual([]);
  });

  it('a file without a providers: section registers from the environment like no file, and says which variables did', () => {
    write('tollgate.yaml', 'version: 1\nserver: { port: 3001 }\n');
    const config = loadConfig({ cwd: dir, env: { OPENAI_API_KEY: 'sk-1', OPENAI_URL: 'http://127.0.0.1:9/v1', OLLAMA_URL: 'http://10.0.0.5:11434' }, configPath: 'tollgate.yaml' });
    expect(config.ai.providers.map((p) => p.name)).toEqual(['ollama', 'openai']);
    expect(config.environmentProviders).toEqual([
      { name: 'ollama', variables: ['OLLAMA_URL'] },
      { name: 'openai', variables: ['OPENAI_API_KEY', 'OPENAI_URL'] },
    ]);
  });

  it('a flag that configures a hosted kind lets its other variables apply without the key variable', () => {
    const { ai } = loadConfig({
      cwd: dir,
      env: { OPENAI_URL: 'http://127.0.0.1:9/v1', OPENAI_CHAT_MODEL: 'gpt-x' },
      overrides: [{ source: '--api-key', path: ['providers', 'openai', 'api_key'], value: 'sk-flag' }],
    });
    expect(ai.providers).toEqual([
      { name: 'openai', kind: 'openai', url: 'http://127.0.0.1:9/v1', apiKey: 'sk-flag', chatModel: 'gpt-x', timeoutMs: 30_000 },
    ]);
  });

  it('loads prompt templates from a file next to the configuration, inline keys winning', () => {
    write('conf/prompts.yaml', 'system_prompt: |\n  From the file.\nwith_context: "F {context} {prompt}"\nproviders:\n  ollama:\n    system_prompt: Ollama file.\n');
    write('conf/tollgate.yaml', 'version: 1\nprompts:\n  file: prompts.yaml\n  with_context: "Inline {context} {prompt}"\n  providers:\n    ollama: { without_context: "O {prompt}" }\n');
    const { prompts } = loadConfig({ cwd: dir, env: {}, configPath: 'conf/tollgate.yaml' }).ai;
    expect(prompts).toMatchObject({
      systemPrompt: 'From the file.\n',
      withContext: 'Inline {context} {prompt}',
      providers: { ollama: { systemPrompt: 'Ollama file.', withoutContext: 'O {prompt}' } },
    });
  });

  it('names the file and the key for schema errors', () => {
    write('bad.yaml', [
      'version: 1',
      'ai: { retry_attempts: -1, timeout: fast, retry_dely: 1 }',
      'providers:',
      '  openai: { kind: openia, url: ftp://x }',
      '  "bad name": {}',
      'api: { auth: basic }',
    ].join('\n'));
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'bad.yaml' }))).toEqual(
      expect.arrayContaining([
        'bad.yaml: ai.retry_attempts: must be >= 0',
        'bad.yaml: ai.timeout: must be a number',
        'bad.yaml: ai.retry_dely: unknown key (did you mean retry_delay?)',
        expect.stringMatching(/^bad\.yaml: providers\.openai\.kind: must be one of ollama, openai, /),
        'bad.yaml: providers.openai.url: must be an http:// or https:// URL',
        'bad.yaml: providers: provider name "bad name" must use letters, digits, "_" or "-"',
        'bad.yaml: api.auth: must be one of token, jwt, none',
      ]),
    );
  });

  it('names the key for rules beyond the schema', () => {
    write('rules.yaml', [
      'version: 1',
      'ai: { default_provider: nope, fallback_providers: [ollama, ghost] }',
      'providers:',
      '  ollama: {}',
      '  mine: { chat_model: x }',
      '  compat: { kind: openai_compatible }',
      'api: { auth: jwt }',
      'prompts: { file: missing.yaml }',
    ].join('\n'));
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'rules.yaml' }))).toEqual([
      "rules.yaml: providers.mine.kind: is required (the name 'mine' is not a provider kind: ollama, openai, anthropic, gemini, mistral, huggingface, deepseek, xai, openai_compatible, azure_openai, vertex, bedrock)",
      'rules.yaml: providers.compat.url: is required for kind openai_compatible',
      "rules.yaml: ai.default_provider: 'nope' is not a registered provider (registered: ollama)",
      "rules.yaml: ai.fallback_providers[1]: 'ghost' is not a registered provider",
      'rules.yaml: api.auth: jwt needs the AuthModule configured (an auth: section or JWT_SECRET)',
      'rules.yaml: prompts.file: missing.yaml: cannot read the file (ENOENT)',
    ]);
  });

  it('maps the cloud kinds\' own sections; a section of another kind, a missing resource url or region is refused naming the key', () => {
    write('keys/vertex.json', '{}');
    write('clouds.yaml', [
      'version: 1',
      'providers:',
      '  azure: { kind: azure_openai, url: "https://res.openai.azure.com", api_key: k, azure: { api_version: 2024-10-21, deployments: { gpt-4o: prod } } }',
      '  vertex: { vertex: { project: my-project, location: europe-west4, credentials_file: keys/vertex.json } }',
      '  bedrock: { model: anthropic.claude-sonnet-4-5, bedrock: { region: eu-central-1, profile: prod } }',
    ].join('\n'));
    const { ai } = loadConfig({ cwd: dir, env: {}, configPath: 'clouds.yaml' });
    expect(ai.providers).toEqual([
      { name: 'azure', kind: 'azure_openai', timeoutMs: 30_000, url: 'https://res.openai.azure.com', apiKey: 'k', azure: { apiVersion: '2024-10-21', deployments: { 'gpt-4o': 'prod' } } },
      { name: 'vertex', kind: 'vertex', timeoutMs: 30_000, vertex: { project: 'my-project', location: 'europe-west4', credentialsFile: join(dir, 'keys/vertex.json') } },
      { name: 'bedrock', kind: 'bedrock', timeoutMs: 30_000, chatModel: 'anthropic.claude-sonnet-4-5', bedrock: { region: 'eu-central-1', profile: 'prod' } },
    ]);
    write('wrong.yaml', [
      'version: 1',
      'providers:',
      '  azure: { kind: azure_openai, api_key: k }',
      '  gpt: { kind: openai, azure: { api_version: 2024-10-21 } }',
      '  vertex: { kind: vertex }',
      '  bedrock: { kind: bedrock }',
    ].join('\n'));
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'wrong.yaml' }))).toEqual([
      'wrong.yaml: providers.azure.url: is required for kind azure_openai',
      'wrong.yaml: providers.gpt.azure: applies only to kind azure_openai (this entry is kind openai)',
      'wrong.yaml: providers.vertex.vertex: is required for kind vertex (project and location)',
      'wrong.yaml: providers.bedrock.bedrock: is required for kind bedrock (region)',
    ]);
    write('schema.yaml', 'version: 1\nproviders:\n  bedrock: { bedrock: { region: Frankfurt } }\n  vertex: { vertex: { location: x } }\n');
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'schema.yaml' }))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^schema\.yaml: providers\.bedrock\.bedrock\.region: /), expect.stringMatching(/^schema\.yaml: providers\.vertex\.vertex.*project/)]),
    );
  });

  it('maps azure.entra (the secret from an environment reference) and refuses it without a secret or beside entra_token', () => {
    write('entra.yaml', [
      'version: 1',
      'providers:',
      '  azure: { kind: azure_openai, url: "https://res.openai.azure.com", azure: { entra: { tenant_id: contoso.onmicrosoft.com, client_id: app-1, client_secret_env: AZ_SECRET } } }',
    ].join('\n'));
    const { ai } = loadConfig({ cwd: dir, env: { AZ_SECRET: 's3cret' }, configPath: 'entra.yaml' });
    expect(ai.providers[0].azure).toEqual({ entra: { tenantId: 'contoso.onmicrosoft.com', clientId: 'app-1', clientSecret: 's3cret' } });
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'entra.yaml' }))).toEqual([expect.stringMatching(/^entra\.yaml: providers\.azure\.azure\.entra.*client_secret/)]);
    write('both.yaml', [
      'version: 1',
      'providers:',
      '  azure: { kind: azure_openai, url: "https://res.openai.azure.com", azure: { entra_token: t, entra: { tenant_id: c, client_id: a, client_secret: s } } }',
    ].join('\n'));
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'both.yaml' }))).toEqual([expect.stringMatching(/^both\.yaml: providers\.azure\.azure/)]);
  });

  it('names the environment variable when its value is invalid', () => {
    expect(problemsOf(() => loadConfig({ cwd: dir, env: { OLLAMA_EMBEDDING_DIMENSIONS: 'many' } }))).toEqual([
      'OLLAMA_EMBEDDING_DIMENSIONS: providers.ollama.embedding_dimensions: must be an integer',
    ]);
    expect(problemsOf(() => loadConfig({ cwd: dir, env: { OPENAI_API_KEY: 'k', OPENAI_URL: 'localhost:1' } }))).toEqual([
      'OPENAI_URL: providers.openai.url: must be an http:// or https:// URL',
    ]);
  });

  it("the schema's documented defaults are the built-in ones", () => {
    const ai = schema.definitions.ai.properties;
    expect({
      timeoutSeconds: ai.timeout.default,
      retryAttempts: ai.retry_attempts.default,
      retryDelaySeconds: ai.retry_delay.default,
      healthCacheSeconds: ai.health_cache_ttl.default,
      maxBatchInputs: ai.max_batch_inputs.default,
      responseRetentionSeconds: ai.responses.properties.retention.default,
      maxStoredResponses: ai.responses.properties.max_stored.default,
    }).toEqual({ ...DEFAULT_AI_SETTINGS, defaultProvider: undefined });
    expect(ai.excluded_context_fields.default).toEqual(DEFAULT_EXCLUDED_CONTEXT_FIELDS);
  });

  it('ai.images: the bounds of image downloads, timeout in seconds; the schema documents the built-in defaults and refuses a bound out of range', () => {
    expect(loadConfig({ cwd: dir, env: {} }).ai.images).toEqual(DEFAULT_IMAGE_DOWNLOAD_LIMITS);
    const file = write('images.yaml', 'version: 1\nai:\n  images: { max_per_request: 4, max_concurrent: 8, max_total_bytes: 4194304, timeout: 2.5 }\n');
    expect(loadConfig({ cwd: dir, env: {}, configPath: file }).ai.images).toEqual({
      ...DEFAULT_IMAGE_DOWNLOAD_LIMITS,
      maxPerRequest: 4,
      maxConcurrent: 8,
      maxTotalBytes: 4194304,
      timeoutMs: 2500,
    });
    const images = schema.definitions.ai.properties.images.properties;
    expect({
      maxPerRequest: images.max_per_request.default,
      maxConcurrentPerRequest: images.max_concurrent_per_request.default,
      maxConcurrent: images.max_concurrent.default,
      maxBytes: images.max_bytes.default,
      maxTotalBytes: images.max_total_bytes.default,
      timeoutMs: images.timeout.default * 1000,
    }).toEqual(DEFAULT_IMAGE_DOWNLOAD_LIMITS);
    const bad = write('bad-images.yaml', 'version: 1\nai:\n  images: { max_concurrent: 0, per_host: 2 }\n');
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: bad }))).toEqual([
      'bad-images.yaml: ai.images.per_host: unknown key (known keys: max_per_request, max_concurrent_per_request, max_concurrent, max_bytes, max_total_bytes, timeout)',
      'bad-images.yaml: ai.images.max_concurrent: must be >= 1',
    ]);
  });
});
