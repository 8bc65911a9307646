/**
 * The vertex adapter against the Vertex AI emulator: Gemini and Claude at their Vertex paths, embeddings through
 * :predict, and the three ways to a bearer token (a configured access token, a service-account key signing its own
 * JWT, workload identity federation exchanging a subject token at its token_url), cached and refreshed before
 * expiry; each error class without an upstream body, token or key in the message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VERTEX_ANTHROPIC_VERSION, VertexProvider } from '../../src/ai/providers/vertex/vertex.provider';
import type { ProviderSettings } from '../../src/ai/providers/ai-provider.interface';
import { AuthenticationError, ModelNotAvailableError, RateLimitError, TollgateError } from '../../src/ai/errors';
import { ANTHROPIC_BODY_MARKER } from '../emulators/anthropic-emulator';
import { GEMINI_BODY_MARKER } from '../emulators/gemini-emulator';
import {
  SUBJECT_TOKEN,
  VERTEX_BODY_MARKER,
  VERTEX_CLIENT_EMAIL,
  VERTEX_LOCATION,
  VERTEX_PROJECT,
  VertexEmulator,
  vertexVector,
} from '../emulators/vertex-emulator';
import { callsInProcess } from '../support/provider-calls';
import { collect, expectSanitized } from '../support/provider-specs';
import { describeSharedProviderBehaviour, providerSuite } from '../support/provider-suite';

const ACCESS_TOKEN = 'ya29.static-MARKER-4f0d';
const MODEL_ROOT = `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers`;

describe('VertexProvider against the Vertex AI emulator', () => {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-vertex-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const suite = providerSuite({
    start: () => VertexEmulator.start({ staticTokens: [ACCESS_TOKEN] }),
    build: (settings) => new VertexProvider(settings),
    settings: (emulator): ProviderSettings => ({
      name: 'vertex',
      kind: 'vertex',
      url: emulator.url,
      chatModel: 'gemini-2.5-flash',
      timeoutMs: 3000,
      vertex: { project: VERTEX_PROJECT, location: VERTEX_LOCATION, accessToken: ACCESS_TOKEN },
    }),
    secrets: [VERTEX_BODY_MARKER, GEMINI_BODY_MARKER, ANTHROPIC_BODY_MARKER, ACCESS_TOKEN, SUBJECT_TOKEN, 'ya29.emulated'],
    resetOptions: (emulator) => {
      emulator.options.tokenLifetimeSeconds = 3600;
      emulator.tokensIssued = 0;
    },
  });
  const { create, secrets, ask } = suite;
  const modelCalls = () => suite.emulator.server.requests.filter((r) => r.path.startsWith(MODEL_ROOT));
  const writeJson = (name: string, value: unknown) => {
    const path = join(work, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };
  const withCredentials = (credentialsFile: string) => ({ vertex: { project: VERTEX_PROJECT, location: VERTEX_LOCATION, credentialsFile } });

  describe('Gemini on Vertex', () => {
    it('posts :generateContent under the project and location with the bearer, translated as the Gemini kind', async () => {
      const result = await create().generate({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], maxTokens: 40 });
      expect(result).toMatchObject({ text: 'Hello from the Gemini emulator', model: 'gemini-2.5-flash', finishReason: 'stop' });
      const [sent] = modelCalls();
      expect(sent.path).toBe(`${MODEL_ROOT}/google/models/gemini-2.5-flash:generateContent`);
      expect(sent.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
      expect(sent.headers['x-goog-api-key']).toBeUndefined();
      expect(sent.body).toEqual({
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
        generationConfig: { maxOutputTokens: 40 },
      });
    });

    it('streams :streamGenerateContent?alt=sse', async () => {
      const chunks = await collect(create().generateStream!(ask));
      expect(chunks.filter((c) => !c.done).map((c) => (c.done ? '' : c.text)).join('')).toBe('Hello from the Gemini emulator');
      expect(chunks.at(-1)).toMatchObject({ done: true, model: 'gemini-2.5-flash', finishReason: 'stop' });
      expect(modelCalls()[0].path).toBe(`${MODEL_ROOT}/google/models/gemini-2.5-flash:streamGenerateContent`);
      expect(modelCalls()[0].query.get('alt')).toBe('sse');
    });

    it('returns the function calls the model asks for', async () => {
      const result = await create().generate({ ...ask, tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] });
      expect(result.finishReason).toBe('tool_calls');
      expect(result.toolCalls).toEqual([{ id: expect.any(String), name: 'get_weather', arguments: expect.any(String) }]);
    });

    it('embeds a batch in one :predict call, and one call per input for gemini-embedding models', async () => {
      const provider = create();
      const batch = await provider.embed({ inputs: ['one', 'three'] });
      expect(batch).toEqual({ embeddings: [vertexVector('one', 4), vertexVector('three', 4)], model: 'text-embedding-005', usage: { inputTokens: 2, totalTokens: 2 } });
      expect(modelCalls().map((r) => r.body)).toEqual([{ instances: [{ content: 'one' }, { content: 'three' }] }]);
      suite.emulator.server.reset();
      const single = await provider.embed({ inputs: ['a', 'bb'], model: 'gemini-embedding-001' });
      expect(single.embeddings).toEqual([vertexVector('a', 4), vertexVector('bb', 4)]);
      expect(modelCalls()).toHaveLength(2);
      expect(modelCalls()[0].path).toBe(`${MODEL_ROOT}/google/models/gemini-embedding-001:predict`);
    });

    it('asks for the configured dimension in parameters.outputDimensionality', async () => {
      const result = await create({ embeddingDimensions: 3 }).embed({ inputs: ['x'] });
      expect(result.embeddings[0]).toHaveLength(3);
      expect(modelCalls()[0].body).toEqual({ instances: [{ content: 'x' }], parameters: { outputDimensionality: 3 } });
    });
  });

  describe('Claude on Vertex', () => {
    const claude = { chatModel: 'claude-sonnet-4-5' };

    it('posts :rawPredict with the model in the URL and anthropic_version in the body', async () => {
      const result = await create(claude).generate({ messages: [{ role: 'user', content: 'Hi' }], maxTokens: 64 });
      expect(result).toMatchObject({ text: 'Hello from the Anthropic emulator', model: 'claude-sonnet-4-5', finishReason: 'stop' });
      const [sent] = modelCalls();
      expect(sent.path).toBe(`${MODEL_ROOT}/anthropic/models/claude-sonnet-4-5:rawPredict`);
      expect(sent.body).toEqual({ anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
      expect(sent.headers['anthropic-version']).toBeUndefined();
    });

    it('streams :streamRawPredict', async () => {
      const chunks = await collect(create(claude).generateStream!(ask));
      expect(chunks.filter((c) => !c.done).map((c) => (c.done ? '' : c.text)).join('')).toBe('Hello from the Anthropic emulator');
      expect(chunks.at(-1)).toMatchObject({ done: true, model: 'claude-sonnet-4-5', finishReason: 'stop' });
      expect(modelCalls()[0].path).toBe(`${MODEL_ROOT}/anthropic/models/claude-sonnet-4-5:streamRawPredict`);
    });

    it('returns tool_use blocks as tool calls', async () => {
      const result = await create(claude).generate({ ...ask, tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] });
      expect(result.finishReason).toBe('tool_calls');
      expect(result.toolCalls?.[0]).toMatchObject({ name: 'get_weather' });
    });

    it("maps Claude's own not_found_error to ModelNotAvailableError", async () => {
      await expectSanitized(create(claude).generate({ ...ask, model: 'claude-unknown-9' }), ModelNotAvailableError, secrets);
    });

    it('is healthy when count-tokens knows the chat model', async () => {
      expect(await create(claude).healthCheck()).toMatchObject({ status: 'healthy', model: 'claude-sonnet-4-5' });
      expect(modelCalls()[0].path).toBe(`${MODEL_ROOT}/anthropic/models/count-tokens:rawPredict`);
      expect(await create({ chatModel: 'claude-gone-1' }).healthCheck()).toMatchObject({ status: 'unhealthy', reachable: true });
    });
  });

  describe('credentials', () => {
    it('signs a JWT with a service-account key, and reuses it for later calls', async () => {
      const provider = create(withCredentials(writeJson('sa.json', suite.emulator.serviceAccountKey())));
      await provider.generate(ask);
      await provider.generate(ask);
      const [first, second] = modelCalls().map((r) => r.headers.authorization);
      expect(first).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      expect(second).toBe(first);
      expect(suite.emulator.signedTokensSeen.size).toBe(1);
      const payload = JSON.parse(Buffer.from(first!.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
      expect(payload).toMatchObject({ iss: VERTEX_CLIENT_EMAIL, sub: VERTEX_CLIENT_EMAIL, scope: 'https://www.googleapis.com/auth/cloud-platform' });
      expect(create(withCredentials(join(work, 'sa.json'))).describe()).toMatchObject({ credentials: 'credentials_file', project: VERTEX_PROJECT });
    });

    it('reads Application Default Credentials from GOOGLE_APPLICATION_CREDENTIALS when no file is configured', async () => {
      const saved = process.env.GOOGLE_APPLICATION_CREDENTIALS;
      process.env.GOOGLE_APPLICATION_CREDENTIALS = writeJson('adc.json', suite.emulator.serviceAccountKey());
      try {
        const provider = create({ vertex: { project: VERTEX_PROJECT, location: VERTEX_LOCATION } });
        expect(provider.describe()).toMatchObject({ credentials: 'application_default' });
        await expect(provider.generate(ask)).resolves.toMatchObject({ text: 'Hello from the Gemini emulator' });
      } finally {
        if (saved === undefined) delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
        else process.env.GOOGLE_APPLICATION_CREDENTIALS = saved;
      }
    });

    // Workload identity federation reaches its token endpoint through gaxios, which Jest's module VM cannot load
    // a fetch for: these calls run in a node process of their own (test/support/provider-calls.ts), from dist/.
    const federated = (file: string, subjectToken: string) => {
      const subject = join(work, `${file}.subject`);
      writeFileSync(subject, subjectToken);
      return { ...suite.settings(), ...withCredentials(writeJson(file, suite.emulator.externalAccount(subject))) };
    };

    it('exchanges a workload identity subject token at the token_url once, then uses the cached token', async () => {
      const outcomes = await callsInProcess(federated('wif.json', SUBJECT_TOKEN), 3);
      expect(outcomes).toEqual(Array(3).fill({ text: 'Hello from the Gemini emulator', model: 'gemini-2.5-flash' }));
      expect(suite.emulator.tokensIssued).toBe(1);
      const form = new URLSearchParams(suite.emulator.server.requestsTo('/v1/token')[0].rawBody);
      expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:token-exchange');
      expect(form.get('subject_token')).toBe(SUBJECT_TOKEN);
      expect(new Set(modelCalls().map((r) => r.headers.authorization))).toEqual(new Set(['Bearer ya29.emulated-1']));
    });

    it('fetches the next token before the current one expires (less than five minutes left)', async () => {
      suite.emulator.options.tokenLifetimeSeconds = 240;
      await callsInProcess(federated('wif-short.json', SUBJECT_TOKEN), 2);
      expect(suite.emulator.tokensIssued).toBe(2);
      expect(modelCalls().map((r) => r.headers.authorization)).toEqual(['Bearer ya29.emulated-1', 'Bearer ya29.emulated-2']);
    });

    it('maps a token exchange the endpoint refuses to AuthenticationError without its body', async () => {
      const [outcome] = await callsInProcess(federated('wif-bad.json', 'not-the-subject-token'), 1);
      expect(outcome).toEqual({ error: 'AuthenticationError', message: 'vertex: the Google token endpoint refused the credentials (400)' });
      expect(modelCalls()).toHaveLength(0);
    });

    it('maps a bearer Vertex refuses to AuthenticationError', async () => {
      const provider = create({ vertex: { project: VERTEX_PROJECT, location: VERTEX_LOCATION, accessToken: 'ya29.expired' } });
      await expectSanitized(provider.generate(ask), AuthenticationError, [...secrets, 'ya29.expired']);
    });

    it('refuses a credentials file it cannot read or parse at construction, naming the option', () => {
      expect(() => create(withCredentials(join(work, 'missing.json')))).toThrow(new TollgateError('vertex: vertex.credentials_file cannot be read (ENOENT)'));
      writeFileSync(join(work, 'garbled.json'), 'not json');
      expect(() => create(withCredentials(join(work, 'garbled.json')))).toThrow('vertex: vertex.credentials_file is not a JSON credentials file');
    });
  });

  describe('errors', () => {
    it('maps an unknown Gemini model to ModelNotAvailableError', async () => {
      await expectSanitized(create().generate({ ...ask, model: 'gemini-0-nope' }), ModelNotAvailableError, secrets);
    });

    it('maps 429 RESOURCE_EXHAUSTED to RateLimitError', async () => {
      suite.emulator.server.failNext(429, { body: { error: { code: 429, message: `Quota exceeded ${VERTEX_BODY_MARKER}`, status: 'RESOURCE_EXHAUSTED' } } });
      await expectSanitized(create().generate(ask), RateLimitError, secrets);
    });

    it('maps another project to AuthenticationError (403 PERMISSION_DENIED)', async () => {
      await expectSanitized(create({ vertex: { project: 'someone-else', location: VERTEX_LOCATION, accessToken: ACCESS_TOKEN } }).generate(ask), AuthenticationError, secrets);
    });

    it('lists its configured models, and describes project, location and credentials without the token', async () => {
      const provider = create({ models: ['claude-sonnet-4-5'] });
      expect((await provider.listModels()).map((m) => m.id)).toEqual(['gemini-2.5-flash', 'text-embedding-005', 'claude-sonnet-4-5']);
      expect(provider.describe()).toMatchObject({ kind: 'vertex', project: VERTEX_PROJECT, location: VERTEX_LOCATION, credentials: 'access_token' });
      expect(JSON.stringify(provider.describe())).not.toContain(ACCESS_TOKEN);
    });
  });

  describeSharedProviderBehaviour(suite, VertexProvider, { embeds: true });
});
