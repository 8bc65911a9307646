/**
 * The azure_openai adapter against the Azure OpenAI emulator: both APIs (v1 and deployment-style with its
 * api-version), deployments named per model, api-key and Entra auth, the content filter's refusals and cut
 * answers, and each error class, with no upstream body or key in a message.
 */
import { AzureOpenAiProvider } from '../../src/ai/providers/azure-openai/azure-openai.provider';
import type { ProviderSettings } from '../../src/ai/providers/ai-provider.interface';
import { AuthenticationError, ContentFilterError, InvalidRequestError, ModelNotAvailableError, RateLimitError } from '../../src/ai/errors';
import { AzureOpenAiEmulator, FILTERED_OUTPUT, FILTERED_PROMPT } from '../emulators/azure-openai-emulator';
import { UPSTREAM_MARKER, vectorFor } from '../emulators/openai-emulator';
import { collect, expectSanitized } from '../support/provider-specs';
import { describeSharedProviderBehaviour, providerSuite } from '../support/provider-suite';

const API_KEY = 'azure-key-MARKER-5d1e';
const ENTRA_TOKEN = 'entra-token-MARKER-77ab';
const DEPLOYMENTS = { 'prod-gpt4o': 'gpt-4o', 'prod-embed': 'text-embedding-3-small' };
const V1 = { azure: { deployments: { 'gpt-4o': 'prod-gpt4o', 'text-embedding-3-small': 'prod-embed' } } };
const DEPLOYMENT_STYLE = { azure: { ...V1.azure, apiVersion: '2024-10-21' } };
const ENTRA_APP = { tenantId: 'contoso.onmicrosoft.com', clientId: 'app-0f3c', clientSecret: 'entra-secret-MARKER-31d9', tokenLifetimeSeconds: 2 };

describe('AzureOpenAiProvider against the Azure OpenAI emulator', () => {
  const suite = providerSuite({
    start: () => AzureOpenAiEmulator.startAzure({ apiKey: API_KEY, entraToken: ENTRA_TOKEN, deployments: DEPLOYMENTS, entraApp: ENTRA_APP }),
    build: (settings) => new AzureOpenAiProvider(settings),
    settings: (emulator): ProviderSettings => ({
      name: 'azure',
      kind: 'azure_openai',
      url: emulator.url,
      apiKey: API_KEY,
      chatModel: 'gpt-4o',
      embeddingModel: 'text-embedding-3-small',
      timeoutMs: 2000,
      ...V1,
    }),
    secrets: [UPSTREAM_MARKER, API_KEY, ENTRA_TOKEN, ENTRA_APP.clientSecret, 'AADSTS'],
  });
  const { create, secrets, ask } = suite;

  it('takes tools, JSON output and images like the OpenAI kind, and embeds', () => {
    expect(create().capabilities).toEqual({
      generate: true,
      embeddings: true,
      batchEmbeddings: true,
      streaming: true,
      listModels: true,
      tools: true,
      structuredOutput: true,
      vision: true,
    });
  });

  it('refuses a registration without a key or an Entra token, naming both', () => {
    expect(() => create({ apiKey: undefined })).toThrow('azure: an api_key, azure.entra_token or azure.entra is required for azure_openai');
  });

  describe('v1 API', () => {
    it('posts to /openai/v1/chat/completions with the deployment as model and the key in api-key', async () => {
      const result = await create().generate({ messages: [{ role: 'user', content: 'hello' }], maxTokens: 20 });
      expect(result).toEqual({ text: 'echo: hello', model: 'gpt-4o', finishReason: 'stop', usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 } });
      const sent = suite.emulator.server.lastRequest!;
      expect(sent.path).toBe('/openai/v1/chat/completions');
      expect([...sent.query.keys()]).toEqual([]);
      expect(sent.headers['api-key']).toBe(API_KEY);
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.body).toEqual({ model: 'prod-gpt4o', messages: [{ role: 'user', content: 'hello' }], stream: false, max_completion_tokens: 20 });
    });

    it('accepts the url given with /openai/v1 as well as the bare resource', async () => {
      await create({ url: `${suite.emulator.url}/openai/v1/` }).generate(ask);
      expect(suite.emulator.server.lastRequest!.path).toBe('/openai/v1/chat/completions');
    });

    it('sends a model without a deployment entry as its own deployment name', async () => {
      const error = await expectSanitized(create().generate({ ...ask, model: 'gpt-unknown' }), ModelNotAvailableError, secrets);
      expect(error.message).toBe("azure: model 'gpt-unknown' is not available (404)");
      expect((suite.emulator.server.lastRequest!.body as { model: string }).model).toBe('gpt-unknown');
    });

    it('streams past the prompt-filter chunk (no model, no choices) and ends with usage', async () => {
      const chunks = await collect(create().generateStream!({ messages: [{ role: 'user', content: 'two words' }] }));
      expect(chunks.filter((c) => !c.done).map((c) => (c.done ? '' : c.text)).join('')).toBe('echo: two words');
      expect(chunks.at(-1)).toEqual({ done: true, model: 'gpt-4o', finishReason: 'stop', usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 } });
      expect((suite.emulator.server.lastRequest!.body as Record<string, unknown>).stream_options).toEqual({ include_usage: true });
    });

    it('returns the tool calls the model asks for', async () => {
      const result = await create().generate({
        ...ask,
        tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
      });
      expect(result.finishReason).toBe('tool_calls');
      expect(result.toolCalls).toEqual([{ id: 'call_emulated_0', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    });

    it('embeds through /openai/v1/embeddings with the embedding deployment', async () => {
      const result = await create().embed({ inputs: ['a', 'b'] });
      expect(result.embeddings).toEqual([vectorFor('a', 4), vectorFor('b', 4)]);
      const sent = suite.emulator.server.lastRequest!;
      expect(sent.path).toBe('/openai/v1/embeddings');
      expect(sent.body).toEqual({ model: 'prod-embed', input: ['a', 'b'], encoding_format: 'base64' });
    });
  });

  describe('deployment-style API', () => {
    it('posts to /openai/deployments/<deployment>/chat/completions with the api-version', async () => {
      const result = await create(DEPLOYMENT_STYLE).generate({ messages: [{ role: 'user', content: 'hi there' }] });
      expect(result.text).toBe('echo: hi there');
      const sent = suite.emulator.server.lastRequest!;
      expect(sent.path).toBe('/openai/deployments/prod-gpt4o/chat/completions');
      expect(sent.query.get('api-version')).toBe('2024-10-21');
    });

    it('streams and embeds at the deployment paths', async () => {
      const provider = create(DEPLOYMENT_STYLE);
      const chunks = await collect(provider.generateStream!(ask));
      expect(chunks.at(-1)).toMatchObject({ done: true, model: 'gpt-4o', finishReason: 'stop' });
      await provider.embed({ inputs: ['x'] });
      expect(suite.emulator.server.requests.map((r) => `${r.path}?${r.query}`)).toEqual([
        '/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21',
        '/openai/deployments/prod-embed/embeddings?api-version=2024-10-21',
      ]);
    });

    it('is healthy when the resource lists its models for this api-version, unhealthy for one it does not serve', async () => {
      expect(await create(DEPLOYMENT_STYLE).healthCheck()).toMatchObject({ status: 'healthy', ready: true });
      expect(suite.emulator.server.lastRequest!.path).toBe('/openai/models');
      const wrongVersion = await create({ azure: { apiVersion: '2023-01-01' } }).healthCheck();
      expect(wrongVersion).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
    });
  });

  describe('Entra ID', () => {
    it('sends the token as a bearer instead of the api-key header', async () => {
      await create({ apiKey: undefined, azure: { ...V1.azure, entraToken: ENTRA_TOKEN } }).generate(ask);
      const sent = suite.emulator.server.lastRequest!;
      expect(sent.headers.authorization).toBe(`Bearer ${ENTRA_TOKEN}`);
      expect(sent.headers['api-key']).toBeUndefined();
    });

    it('maps a refused token to AuthenticationError without the token', async () => {
      await expectSanitized(create({ azure: { ...V1.azure, entraToken: `${ENTRA_TOKEN}-expired` } }).generate(ask), AuthenticationError, secrets);
    });
  });

  describe('Entra ID, client credentials', () => {
    const entra = (app: Partial<typeof ENTRA_APP> = {}) =>
      create({ apiKey: undefined, azure: { ...V1.azure, entra: { ...ENTRA_APP, ...app, authority: suite.emulator.url } } });
    const tokenRequests = () => suite.emulator.server.requests.filter((r) => r.path.endsWith('/oauth2/v2.0/token'));
    const chatBearers = () => suite.emulator.server.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.headers.authorization);
    const wait = (ms: number) => new Promise((done) => setTimeout(done, ms));

    it('fetches a token by the client-credentials grant, reuses it, and fetches the next before it expires', async () => {
      const provider = entra();
      await provider.generate(ask);
      await provider.generate(ask);
      const [grant] = tokenRequests();
      expect(grant.path).toBe(`/${ENTRA_APP.tenantId}/oauth2/v2.0/token`);
      expect(Object.fromEntries(new URLSearchParams(grant.rawBody))).toEqual({
        grant_type: 'client_credentials',
        client_id: ENTRA_APP.clientId,
        client_secret: ENTRA_APP.clientSecret,
        scope: 'https://cognitiveservices.azure.com/.default',
      });
      expect(tokenRequests()).toHaveLength(1);
      // A 2-second token is refreshed after half its lifetime (five minutes before expiry, for an hour's token).
      await wait(1100);
      await provider.generate(ask);
      expect(tokenRequests()).toHaveLength(2);
      const bearers = chatBearers();
      expect(bearers[0]).toMatch(/^Bearer entra-\d+-app-0f3c$/);
      expect(bearers[1]).toBe(bearers[0]);
      expect(bearers[2]).not.toBe(bearers[0]);
      expect(suite.emulator.server.requests.every((r) => r.headers['api-key'] === undefined)).toBe(true);
    });

    it('sends the token with a Responses request passed through as written, plain and streamed (B19)', async () => {
      const provider = entra();
      const native = { dialect: 'openai-responses' as const, body: { model: 'gpt-test', input: 'Hi' }, headers: {} };
      expect((await provider.generate({ ...ask, native })).text).toMatch(/Hi/);
      for await (const chunk of provider.generateStream!({ ...ask, native })) if (chunk.done) break;
      const bearers = suite.emulator.server.requests.filter((r) => r.path.endsWith('/openai/v1/responses')).map((r) => r.headers.authorization);
      expect(bearers).toHaveLength(2);
      expect(bearers.every((bearer) => /^Bearer entra-\d+-app-0f3c$/.test(bearer ?? ''))).toBe(true);
    });

    it('shares one token request among concurrent calls', async () => {
      const provider = entra();
      await Promise.all(Array.from({ length: 5 }, () => provider.generate(ask)));
      expect(tokenRequests()).toHaveLength(1);
      expect(new Set(chatBearers()).size).toBe(1);
    });

    it("a 401 from Azure for a token that expired early is an AuthenticationError without Azure's text or the token; the next call fetches a new one", async () => {
      const provider = entra({ tokenLifetimeSeconds: 3600 });
      await provider.generate(ask);
      suite.emulator.expireEntraTokens();
      const error = await expectSanitized(provider.generate(ask), AuthenticationError, [...secrets, chatBearers()[0]!.slice('Bearer '.length)]);
      expect(error.message).not.toContain('expired');
      expect((await provider.generate(ask)).text).toMatch(/^echo: /);
      expect(tokenRequests()).toHaveLength(2);
    });

    it("a refused secret is an AuthenticationError naming OAuth's code, never the AADSTS text or the secret; no chat call is made", async () => {
      const error = await expectSanitized(entra({ clientSecret: 'wrong-secret' }).generate(ask), AuthenticationError, [...secrets, 'wrong-secret']);
      expect(error.message).toBe('azure: Microsoft Entra refused the client credentials: 401 (invalid_client)');
      expect(chatBearers()).toHaveLength(0);
    });

    it('describes the registration as Entra client credentials, without the secret', () => {
      const described = entra().describe();
      expect(described.auth).toBe('entra-client-credentials');
      expect(JSON.stringify(described)).not.toContain(ENTRA_APP.clientSecret);
    });
  });

  describe('content filter', () => {
    it('maps a filtered prompt to a ContentFilterError (400) naming the categories that fired, and sends it once', async () => {
      const error = await expectSanitized(
        create().generate({ messages: [{ role: 'user', content: `please ${FILTERED_PROMPT}` }] }),
        ContentFilterError,
        secrets,
      );
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(error.type).toBe('content_filter');
      expect(error.param).toBe('messages');
      expect(error.message).toBe("azure: Azure's content filter refused the prompt (hate: high, jailbreak)");
      expect(suite.emulator.server.requests).toHaveLength(1);
    });

    it('refuses a filtered prompt the same way when streaming', async () => {
      const stream = create(DEPLOYMENT_STYLE).generateStream!({ messages: [{ role: 'user', content: FILTERED_PROMPT }] });
      await expectSanitized(collect(stream), ContentFilterError, secrets);
    });

    it('passes an answer the output filter cut on as finish reason content_filter with no text', async () => {
      const filtered = { messages: [{ role: 'user' as const, content: FILTERED_OUTPUT }] };
      expect(await create().generate(filtered)).toEqual({
        text: '',
        model: 'gpt-4o',
        finishReason: 'content_filter',
        usage: { inputTokens: 7, outputTokens: 0, totalTokens: 7 },
      });
      const chunks = await collect(create().generateStream!(filtered));
      expect(chunks).toEqual([{ done: true, model: 'gpt-4o', finishReason: 'content_filter', usage: undefined }]);
    });
  });

  describe('errors', () => {
    it('maps a wrong key to AuthenticationError', async () => {
      await expectSanitized(create({ apiKey: 'wrong-key' }).generate(ask), AuthenticationError, secrets);
    });

    it('maps a missing deployment to ModelNotAvailableError in either API', async () => {
      await expectSanitized(create({ ...DEPLOYMENT_STYLE, chatModel: 'gpt-5' }).generate(ask), ModelNotAvailableError, secrets);
    });

    it("maps a 429 to RateLimitError with Azure's retry-after-ms", async () => {
      suite.emulator.server.failNext(429, {
        headers: { 'retry-after-ms': '1500', 'retry-after': '2' },
        body: { error: { code: '429', message: `Requests have exceeded the call rate limit. ${UPSTREAM_MARKER}` } },
      });
      const error = await expectSanitized(create().generate(ask), RateLimitError, secrets);
      expect(error.retryAfterMs).toBe(1500);
    });

    it('describes the API and deployments, never the key or token', () => {
      const described = create({ ...DEPLOYMENT_STYLE, azure: { ...DEPLOYMENT_STYLE.azure, entraToken: ENTRA_TOKEN } }).describe();
      expect(described).toMatchObject({ kind: 'azure_openai', api: 'deployments', apiVersion: '2024-10-21', deployments: V1.azure.deployments, auth: 'entra' });
      expect(JSON.stringify(described)).not.toContain(ENTRA_TOKEN);
      expect(JSON.stringify(described)).not.toContain(API_KEY);
    });
  });

  describeSharedProviderBehaviour(suite, AzureOpenAiProvider, { embeds: true });
});
