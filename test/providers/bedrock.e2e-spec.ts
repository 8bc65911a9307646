/**
 * The bedrock adapter against the Bedrock emulator: Converse and ConverseStream (event-stream frames), tools,
 * images, usage with cache reads and writes, stop reasons, Titan and Cohere embeddings through InvokeModel, SigV4
 * signatures the emulator verifies (credentials from the AWS chain: variables here, a profile in a process of its
 * own) or a Bedrock API key, and each error class without an upstream body, secret or key in the message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BedrockProvider } from '../../src/ai/providers/bedrock/bedrock.provider';
import type { ProviderSettings } from '../../src/ai/providers/ai-provider.interface';
import { AuthenticationError, CapabilityNotSupportedError, ModelNotAvailableError, ProviderError, RateLimitError } from '../../src/ai/errors';
import {
  BEDROCK_ACCESS_KEY_ID,
  BEDROCK_API_KEY,
  BEDROCK_BODY_MARKER,
  BEDROCK_REGION,
  BEDROCK_REPLY,
  BEDROCK_SECRET_KEY,
  BedrockEmulator,
  bedrockVector,
} from '../emulators/bedrock-emulator';
import { callsInProcess } from '../support/provider-calls';
import { collect, expectSanitized } from '../support/provider-specs';
import { describeSharedProviderBehaviour, providerSuite } from '../support/provider-suite';

const CLAUDE = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const weather = { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

describe('BedrockProvider against the Bedrock emulator', () => {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  beforeAll(() => {
    process.env.AWS_ACCESS_KEY_ID = BEDROCK_ACCESS_KEY_ID;
    process.env.AWS_SECRET_ACCESS_KEY = BEDROCK_SECRET_KEY;
  });
  afterAll(() => {
    for (const [name, value] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const suite = providerSuite({
    start: () => BedrockEmulator.start(),
    build: (settings) => new BedrockProvider(settings),
    settings: (emulator): ProviderSettings => ({ name: 'bedrock', kind: 'bedrock', url: emulator.url, chatModel: CLAUDE, timeoutMs: 3000, bedrock: { region: BEDROCK_REGION } }),
    secrets: [BEDROCK_BODY_MARKER, BEDROCK_SECRET_KEY, BEDROCK_API_KEY],
    resetOptions: (emulator) => {
      emulator.options.cacheReadTokens = undefined;
      emulator.options.cacheWriteTokens = undefined;
      emulator.options.streamException = undefined;
    },
  });
  const { create, secrets, ask } = suite;

  describe('Converse', () => {
    it('posts /model/<id>/converse signed with SigV4, the model id encoded, and maps the answer', async () => {
      const result = await create().generate({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], maxTokens: 50, temperature: 0.3, stop: ['END'] });
      expect(result).toEqual({ text: BEDROCK_REPLY, model: CLAUDE, finishReason: 'stop', usage: { inputTokens: expect.any(Number), outputTokens: 6, totalTokens: expect.any(Number) } });
      const sent = suite.emulator.server.lastRequest!;
      expect(sent.path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
      expect(sent.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_ACCESS_KEY_ID}/\\d{8}/${BEDROCK_REGION}/bedrock/aws4_request, SignedHeaders=`));
      expect(sent.body).toEqual({
        system: [{ text: 'Be brief.' }],
        messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
        inferenceConfig: { maxTokens: 50, temperature: 0.3, stopSequences: ['END'] },
      });
    });

    it('counts cache reads and writes into the input tokens, each reported as its part', async () => {
      suite.emulator.options.cacheReadTokens = 100;
      suite.emulator.options.cacheWriteTokens = 20;
      const { usage } = await create().generate(ask);
      const uncached = JSON.stringify([{ role: 'user', content: [{ text: 'Hi' }] }]).length;
      expect(usage).toEqual({ inputTokens: uncached + 120, outputTokens: 6, totalTokens: uncached + 126, cachedInputTokens: 100, cacheWriteInputTokens: 20 });
    });

    it('runs a tool loop: toolConfig and a toolUse, then the toolResult in the next user turn', async () => {
      const provider = create();
      const first = await provider.generate({ ...ask, tools: [weather], toolChoice: 'required' });
      expect(first).toMatchObject({ text: 'Let me check.', finishReason: 'tool_calls', toolCalls: [{ id: 'tooluse_emulated_1', name: 'get_weather', arguments: '{"city":"city-1"}' }] });
      expect((suite.emulator.server.lastRequest!.body as Record<string, unknown>).toolConfig).toEqual({
        tools: [{ toolSpec: { name: 'get_weather', description: 'Weather in a city', inputSchema: { json: weather.parameters } } }],
        toolChoice: { any: {} },
      });
      const second = await provider.generate({
        messages: [...ask.messages, { role: 'assistant', content: 'Let me check.', toolCalls: first.toolCalls }, { role: 'tool', toolCallId: 'tooluse_emulated_1', content: '18C', isError: false }],
        tools: [weather],
      });
      expect(second).toMatchObject({ text: 'Tool said: 18C', finishReason: 'stop' });
      expect((suite.emulator.server.lastRequest!.body as { messages: unknown[] }).messages.slice(1)).toEqual([
        { role: 'assistant', content: [{ text: 'Let me check.' }, { toolUse: { toolUseId: 'tooluse_emulated_1', name: 'get_weather', input: { city: 'city-1' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_emulated_1', content: [{ text: '18C' }] } }] },
      ]);
    });

    it('sends image bytes with their format', async () => {
      const result = await create().generate({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: PNG_BASE64 } }] }] });
      expect(result.text).toBe(`${BEDROCK_REPLY} (1 image)`);
      expect((suite.emulator.server.lastRequest!.body as { messages: Array<{ content: unknown[] }> }).messages[0].content[1]).toEqual({ image: { format: 'png', source: { bytes: PNG_BASE64 } } });
    });

    it('refuses response_format (Converse has no JSON mode) without calling upstream', async () => {
      await expectSanitized(create().generate({ ...ask, responseFormat: { type: 'json_object' } }), CapabilityNotSupportedError, secrets);
      expect(suite.emulator.server.requests).toHaveLength(0);
    });
  });

  describe('ConverseStream', () => {
    it('reads event-stream frames: text deltas, then the stop reason and usage', async () => {
      const chunks = await collect(create().generateStream!(ask));
      expect(chunks.filter((c) => !c.done).map((c) => (c.done ? '' : c.text)).join('')).toBe(BEDROCK_REPLY);
      expect(chunks.length).toBeGreaterThan(3);
      expect(chunks.at(-1)).toEqual({ done: true, model: CLAUDE, finishReason: 'stop', usage: { inputTokens: expect.any(Number), outputTokens: 6, totalTokens: expect.any(Number) } });
      expect(suite.emulator.server.lastRequest!.path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream');
    });

    it('streams a toolUse as one call whose input arrives in pieces', async () => {
      const chunks = await collect(create().generateStream!({ ...ask, tools: [weather] }));
      const calls = chunks.flatMap((c) => (c.done ? [] : (c.toolCalls ?? [])));
      expect(calls[0]).toEqual({ index: 0, id: 'tooluse_emulated_1', name: 'get_weather', arguments: '' });
      expect(calls.slice(1).map((c) => c.arguments).join('')).toBe('{"city":"city-1"}');
      expect(chunks.at(-1)).toMatchObject({ done: true, finishReason: 'tool_calls' });
    });

    it('maps an exception message after the 200 by its type', async () => {
      suite.emulator.options.streamException = 'throttlingException';
      await expectSanitized(collect(create().generateStream!(ask)), RateLimitError, secrets);
      suite.emulator.options.streamException = 'modelStreamErrorException';
      await expectSanitized(collect(create().generateStream!(ask)), ProviderError, secrets);
    });
  });

  describe('embeddings (InvokeModel)', () => {
    it('embeds with Titan one input per call, asking for the configured dimensions', async () => {
      const result = await create({ embeddingDimensions: 3 }).embed({ inputs: ['one two', 'three'] });
      expect(result).toEqual({ embeddings: [bedrockVector('one two', 3), bedrockVector('three', 3)], model: 'amazon.titan-embed-text-v2:0', usage: { inputTokens: 3, totalTokens: 3 } });
      // The calls go out together, so they may arrive in either order.
      expect(suite.emulator.server.requests.map((r) => [r.path, r.body])).toEqual(
        expect.arrayContaining([
          ['/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'one two', dimensions: 3 }],
          ['/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'three', dimensions: 3 }],
        ]),
      );
      expect(suite.emulator.server.requests).toHaveLength(2);
    });

    it('embeds with Cohere in one call', async () => {
      const result = await create().embed({ inputs: ['a', 'b'], model: 'cohere.embed-english-v3' });
      expect(result.embeddings).toEqual([bedrockVector('a', 4), bedrockVector('b', 4)]);
      expect(suite.emulator.server.requests).toHaveLength(1);
    });
  });

  describe('credentials', () => {
    it('sends a Bedrock API key as a bearer instead of signing', async () => {
      const provider = create({ apiKey: BEDROCK_API_KEY });
      await provider.generate(ask);
      expect(suite.emulator.server.lastRequest!.headers.authorization).toBe(`Bearer ${BEDROCK_API_KEY}`);
      expect(provider.describe()).toMatchObject({ auth: 'api_key', region: BEDROCK_REGION });
      expect(JSON.stringify(provider.describe())).not.toContain(BEDROCK_API_KEY);
    });

    it('is refused 403 InvalidSignatureException when the secret is wrong: AuthenticationError', async () => {
      process.env.AWS_SECRET_ACCESS_KEY = 'not-the-secret';
      try {
        const error = await expectSanitized(create().generate(ask), AuthenticationError, [...secrets, 'not-the-secret']);
        expect(error.message).toBe('bedrock: upstream rejected the credentials (403 InvalidSignatureException)');
      } finally {
        process.env.AWS_SECRET_ACCESS_KEY = BEDROCK_SECRET_KEY;
      }
    });

    it('signs with a named profile from the shared credentials file (in a process of its own)', async () => {
      const home = mkdtempSync(join(tmpdir(), 'tollgate-aws-'));
      try {
        writeFileSync(join(home, 'credentials'), `[prod]\naws_access_key_id = ${BEDROCK_ACCESS_KEY_ID}\naws_secret_access_key = ${BEDROCK_SECRET_KEY}\n`);
        const settings = { ...suite.settings(), bedrock: { region: BEDROCK_REGION, profile: 'prod' } };
        const outcomes = await callsInProcess(settings, 2, { AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'), AWS_CONFIG_FILE: join(home, 'config') });
        expect(outcomes).toEqual(Array(2).fill({ text: BEDROCK_REPLY, model: CLAUDE }));
        const [missing] = await callsInProcess({ ...settings, bedrock: { region: BEDROCK_REGION, profile: 'nope' } }, 1, { AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'), AWS_CONFIG_FILE: join(home, 'config') });
        expect(missing).toEqual({ error: 'AuthenticationError', message: 'bedrock: no AWS credentials could be loaded for signing' });
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });
  });

  describe('errors', () => {
    it('maps an unknown model to ModelNotAvailableError', async () => {
      await expectSanitized(create().generate({ ...ask, model: 'meta.llama-none' }), ModelNotAvailableError, secrets);
    });

    it('maps ThrottlingException to RateLimitError', async () => {
      suite.emulator.server.failNext(429, { headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/' }, body: { message: `Too many requests ${BEDROCK_BODY_MARKER}` } });
      await expectSanitized(create().generate(ask), RateLimitError, secrets);
    });

    it('is healthy when a one-token Converse call succeeds; unhealthy for a model the region lacks', async () => {
      expect(await create().healthCheck()).toMatchObject({ status: 'healthy', model: CLAUDE });
      expect((suite.emulator.server.lastRequest!.body as Record<string, unknown>).inferenceConfig).toEqual({ maxTokens: 1 });
      expect(await create({ chatModel: 'meta.llama-none' }).healthCheck()).toMatchObject({ status: 'unhealthy', reachable: true });
    });
  });

  describeSharedProviderBehaviour(suite, BedrockProvider, { embeds: true });
});
