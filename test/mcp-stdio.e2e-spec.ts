/**
 * `tollgate mcp --stdio` spawned from the built CLI and driven by the MCP SDK's own Client over stdio:
 * tools and resources, generate (OpenAI emulator) and agent (scripted emulator), and a stdout that carries
 * protocol messages only.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { OpenAiEmulator, UPSTREAM_MARKER } from './emulators/openai-emulator';
import { actionBlock, observationsIn, ScriptedChatEmulator } from './emulators/scripted-chat-emulator';
import { SearxngEmulator } from './emulators/searxng-emulator';
import { buildDistIfStale, CLI } from './support/cli-run';

const KEY = 'sk-mcp-stdio-KEY-8812';

let work: string;
let openai: OpenAiEmulator;
let chat: ScriptedChatEmulator;
let searxng: SearxngEmulator;

const env = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  OPENAI_API_KEY: KEY,
  OPENAI_URL: openai.url,
  OPENAI_CHAT_MODEL: 'gpt-test',
  OPENAI_EMBEDDING_MODEL: 'embed-test',
  // The agent's provider, registered as a second OpenAI-compatible provider.
  SCRIPTED_URL: chat.url,
  SEARXNG_URL: searxng.url,
  SEARXNG_ALLOW_PRIVATE_NETWORK: 'true',
});

// The agent is scripted in the JSON action protocol, which openai_compatible (now with native tools) needs pinned.
const CONFIG = 'version: 1\nai: { retry_attempts: 0, default_provider: openai }\nagent: { tool_protocol: prompt }\nproviders:\n  openai: {}\n  scripted: { kind: openai_compatible, url_env: SCRIPTED_URL, chat_model: gpt-test }\n';

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-mcp-stdio-'));
  writeFileSync(join(work, 'tollgate.yaml'), CONFIG);
  [openai, chat, searxng] = await Promise.all([OpenAiEmulator.start({ apiKey: KEY }), ScriptedChatEmulator.start('gpt-test'), SearxngEmulator.start()]);
}, 120_000);

afterAll(async () => {
  await Promise.all([openai.close(), chat.close(), searxng.close()]);
  rmSync(work, { recursive: true, force: true });
});

describe('tollgate mcp --stdio with the SDK Client', () => {
  let client: Client;
  let transport: StdioClientTransport;
  const transportErrors: Error[] = [];
  let stderr = '';

  beforeAll(async () => {
    transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--stdio', '--config', 'tollgate.yaml'], cwd: work, env: env(), stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'tollgate-test', version: '1.0.0' });
    client.onerror = (error) => transportErrors.push(error);
    await client.connect(transport);
  }, 20_000);

  afterAll(async () => {
    await client.close();
  });

  it('negotiates the protocol and lists the six tools with JSON Schemas, and both resources', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'tollgate' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['generate', 'embed', 'search', 'providers', 'health', 'agent']);
    const agent = tools.find((t) => t.name === 'agent')!;
    expect(agent.inputSchema).toMatchObject({ type: 'object', required: ['prompt', 'tools'], properties: { tools: { type: 'array' } } });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['tollgate://providers', 'tollgate://health']);
  });

  it('calls generate and embed through the provider emulator', async () => {
    const generated = await client.callTool({ name: 'generate', arguments: { prompt: 'hello over stdio' } });
    expect(generated.isError).toBeFalsy();
    const body = JSON.parse((generated.content as Array<{ text: string }>)[0].text);
    expect(body).toMatchObject({ response: 'echo: hello over stdio', provider: 'openai', model: 'gpt-test' });
    const embedded = await client.callTool({ name: 'embed', arguments: { input: 'vector me' } });
    expect(JSON.parse((embedded.content as Array<{ text: string }>)[0].text)).toMatchObject({ provider: 'openai', dimensions: 4 });
  });

  it('runs the agent with an allowlisted search tool', async () => {
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('web_search', { query: 'mcp', limit: 1 }) : 'Found it.');
    const result = await client.callTool({ name: 'agent', arguments: { prompt: 'look it up', tools: ['web_search'], provider: 'scripted' } });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse((result.content as Array<{ text: string }>)[0].text)).toMatchObject({
      response: 'Found it.',
      provider: 'scripted',
      loops_run: 2,
      success: true,
      actions: [{ tool: 'web_search', outcome: 'ok' }],
    });
  });

  it('reads the providers and health resources, never returning the API key', async () => {
    const providers = await client.readResource({ uri: 'tollgate://providers' });
    const listed = JSON.parse((providers.contents[0] as { text: string }).text);
    expect(listed.default_provider).toBe('openai');
    expect(listed.providers.map((p: { name: string }) => p.name)).toEqual(['openai', 'scripted']);
    expect(JSON.stringify(providers)).not.toContain(KEY);
    const health = await client.readResource({ uri: 'tollgate://health' });
    expect(JSON.parse((health.contents[0] as { text: string }).text).providers).toHaveLength(2);
    await expect(client.readResource({ uri: 'tollgate://secrets' })).rejects.toThrow(/unknown resource/);
  });

  it('reports bad arguments, unknown tools and upstream failures without upstream text', async () => {
    const invalid = await client.callTool({ name: 'generate', arguments: { prompt: '' } });
    expect(invalid.isError).toBe(true);
    expect(JSON.parse((invalid.content as Array<{ text: string }>)[0].text)).toEqual({ error: { type: 'invalid_request', message: expect.stringContaining('prompt') } });
    const unknownProvider = await client.callTool({ name: 'generate', arguments: { prompt: 'x', provider: 'ghost' } });
    expect(JSON.parse((unknownProvider.content as Array<{ text: string }>)[0].text).error.type).toBe('unknown_provider');
    await expect(client.callTool({ name: 'shell', arguments: {} })).rejects.toThrow(/unknown tool 'shell'/);
    // Both providers fail, so fallback cannot rescue the call.
    openai.serverErrorNext(503);
    chat.server.failNext(503, { body: { error: { message: UPSTREAM_MARKER } } });
    const failed = await client.callTool({ name: 'generate', arguments: { prompt: 'x' } });
    expect(failed.isError).toBe(true);
    expect(JSON.stringify(failed)).not.toContain(UPSTREAM_MARKER);
    expect(transportErrors).toEqual([]);
  });
});

describe('stdout of tollgate mcp --stdio', () => {
  it('carries JSON-RPC messages only, one per line, and the process ends when stdin closes', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp', '--stdio', '--config', 'tollgate.yaml'], { cwd: work, env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'generate', arguments: { prompt: 'raw line' } } });
    await waitFor(() => stdout.split('\n').filter(Boolean).length >= 2);
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = stdout.split('\n');
    expect(lines.pop()).toBe('');
    const messages = lines.map((line) => JSON.parse(line));
    expect(messages.map((m) => [m.jsonrpc, m.id])).toEqual([['2.0', 1], ['2.0', 2]]);
    expect(messages[0].result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(messages[1].result.content[0].text).toContain('echo: raw line');
  });

  it('refuses to run without --stdio (exit 2)', () => {
    const run = spawnSync(process.execPath, [CLI, 'mcp'], { cwd: work, env: env(), encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('--stdio is required');
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
