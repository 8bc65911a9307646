/**
 * The cloud kinds behind the gateway, driven by the official `openai` client through /openai/v1: Azure OpenAI (both
 * APIs), Vertex AI (Gemini and Claude) and Bedrock (Converse, with an API key) answer chat, streams, tool calls and
 * embeddings as the vendor-direct kinds do, Azure's content filter reaches the client as a 400 `content_filter`
 * naming the categories, and an API key's model allow-list holds in front of them.
 */
import OpenAI from 'openai';
import { AzureOpenAiEmulator, FILTERED_PROMPT } from './emulators/azure-openai-emulator';
import { BEDROCK_API_KEY, BEDROCK_REGION, BEDROCK_REPLY, BedrockEmulator } from './emulators/bedrock-emulator';
import { UPSTREAM_MARKER } from './emulators/openai-emulator';
import { VERTEX_LOCATION, VERTEX_PROJECT, VertexEmulator } from './emulators/vertex-emulator';
import { bearerCall } from './support/bearer-call';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-cloud-providers';
const AZURE_KEY = 'azure-key-for-clients';
const VERTEX_TOKEN = 'ya29.static-for-clients';
const ADMIN_TOKEN = 'admin-token-for-cloud-clients';

let azure: AzureOpenAiEmulator;
let vertex: VertexEmulator;
let bedrock: BedrockEmulator;
let apps: TestApps;
let baseURL: string;
let origin: string;

beforeAll(async () => {
  [azure, vertex, bedrock] = await Promise.all([
    AzureOpenAiEmulator.startAzure({ apiKey: AZURE_KEY, deployments: { 'prod-4o': 'gpt-4o', 'prod-embed': 'text-embedding-3-small' } }),
    VertexEmulator.start({ staticTokens: [VERTEX_TOKEN] }),
    BedrockEmulator.start(),
  ]);
  apps = new TestApps('tollgate-cloud-clients-', { API_TOKEN: TOKEN });
  const vertexSection = `vertex: { project: ${VERTEX_PROJECT}, location: ${VERTEX_LOCATION}, access_token: "${VERTEX_TOKEN}" }`;
  ({ origin } = await apps.listen(
    [
      'version: 1',
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: azure }',
      `governance: { keys: { store: memory }, admin_token: "${ADMIN_TOKEN}" }`,
      'providers:',
      `  azure: { kind: azure_openai, url: "${azure.url}", api_key: "${AZURE_KEY}", chat_model: gpt-4o, embedding_model: text-embedding-3-small, timeout: 5,`,
      '           azure: { deployments: { gpt-4o: prod-4o, text-embedding-3-small: prod-embed } } }',
      `  azure-classic: { kind: azure_openai, url: "${azure.url}", api_key: "${AZURE_KEY}", chat_model: gpt-4o, timeout: 5,`,
      '                   azure: { api_version: 2024-10-21, deployments: { gpt-4o: prod-4o } } }',
      `  vertex: { url: "${vertex.url}", chat_model: gemini-2.5-flash, models: [claude-sonnet-4-5], timeout: 5, ${vertexSection} }`,
      `  bedrock: { url: "${bedrock.url}", api_key: "${BEDROCK_API_KEY}", timeout: 5, bedrock: { region: ${BEDROCK_REGION} } }`,
      '',
    ].join('\n'),
  ));
  baseURL = `${origin}/openai/v1`;
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([azure?.close(), vertex?.close(), bedrock?.close()]);
});

beforeEach(() => {
  azure.server.reset();
  vertex.server.reset();
  bedrock.server.reset();
});

const client = () => new OpenAI({ apiKey: TOKEN, baseURL, maxRetries: 0 });
const weather: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe.each([
  { model: 'azure/gpt-4o', answer: 'echo: Hello', upstream: () => azure.server.requests, path: '/openai/v1/chat/completions' },
  { model: 'azure-classic/gpt-4o', answer: 'echo: Hello', upstream: () => azure.server.requests, path: '/openai/deployments/prod-4o/chat/completions' },
  { model: 'vertex/gemini-2.5-flash', answer: 'Hello from the Gemini emulator', upstream: () => vertex.server.requests, path: `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/google/models/gemini-2.5-flash:generateContent` },
  { model: 'vertex/claude-sonnet-4-5', answer: 'Hello from the Anthropic emulator', upstream: () => vertex.server.requests, path: `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/anthropic/models/claude-sonnet-4-5:rawPredict` },
  {
    model: 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0',
    answer: BEDROCK_REPLY,
    upstream: () => bedrock.server.requests,
    path: '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse',
  },
])('the openai client on $model', ({ model, answer, upstream, path }) => {
  it('gets a chat completion with usage, sent to the cloud path', async () => {
    const completion = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }] });
    expect(completion.choices[0].message.content).toBe(answer);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(upstream().map((r) => r.path)).toEqual([path]);
  });

  it('streams the same answer', async () => {
    const stream = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(answer);
    expect(finish).toBe('stop');
  });

  it('returns a tool call for an offered tool', async () => {
    const completion = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weather] });
    const [call] = completion.choices[0].message.tool_calls ?? [];
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
  });
});

describe('embeddings through the openai client', () => {
  it('embeds on Azure (v1, the embedding deployment), on Vertex (:predict) and on Bedrock (Titan through InvokeModel)', async () => {
    const onAzure = await client().embeddings.create({ model: 'azure/text-embedding-3-small', input: ['a', 'b'] });
    expect(onAzure.data.map((d) => d.embedding.length)).toEqual([4, 4]);
    expect((azure.server.lastRequest!.body as { model: string }).model).toBe('prod-embed');
    const onVertex = await client().embeddings.create({ model: 'vertex/text-embedding-005', input: 'c' });
    expect(onVertex.data[0].embedding).toHaveLength(4);
    expect(vertex.server.lastRequest!.path).toMatch(/\/publishers\/google\/models\/text-embedding-005:predict$/);
    const onBedrock = await client().embeddings.create({ model: 'bedrock/amazon.titan-embed-text-v2:0', input: ['d', 'e'] });
    expect(onBedrock.data.map((d) => d.embedding.length)).toEqual([4, 4]);
    expect(bedrock.server.requests).toHaveLength(2);
  });
});

describe("Azure's content filter through the openai client", () => {
  it('is a 400 content_filter naming the categories, without Azure\'s text', async () => {
    const error = await client()
      .chat.completions.create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: FILTERED_PROMPT }] })
      .then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('content_filter');
    expect(bad.param).toBe('messages');
    expect(bad.message).toContain("azure: Azure's content filter refused the prompt (hate: high, jailbreak)");
    expect(JSON.stringify(bad.error)).not.toContain(UPSTREAM_MARKER);
    expect(azure.server.requests).toHaveLength(1);
  });
});

describe('governance in front of the cloud kinds', () => {
  it("holds a key to its model allow-list: a cloud model outside it is refused before any upstream call, one inside it answers", async () => {
    const created = await bearerCall(origin, 'POST', '/v1/admin/keys', ADMIN_TOKEN, { tenant: 't-cloud', models: ['vertex/gemini-2.5-flash'] });
    expect(created.status).toBe(201);
    const keyed = new OpenAI({ apiKey: created.body.key as string, baseURL, maxRetries: 0 });
    const refused = await keyed.chat.completions.create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(azure.server.requests).toHaveLength(0);
    const allowed = await keyed.chat.completions.create({ model: 'vertex/gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] });
    expect(allowed.choices[0].message.content).toBe('Hello from the Gemini emulator');
  });
});
