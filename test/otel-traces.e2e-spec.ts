/**
 * OpenTelemetry traces and GenAI metrics (docs/operations.md#traces) from the built server as a real process,
 * exported over OTLP/HTTP (JSON) to a receiver this spec starts: the span tree of a chat, a stream, a fallback
 * (two attempt spans), an agent run and an MCP tool call, the caller's traceparent followed and the attempt's
 * sent upstream, the GenAI metrics, and no credential, prompt or answer anywhere in what was exported. Then:
 * with tracing off, nothing of OpenTelemetry's SDK is loaded.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { actionBlock, observationsIn, ScriptedChatEmulator } from './emulators/scripted-chat-emulator';
import { SearxngEmulator } from './emulators/searxng-emulator';
import { buildDistIfStale, ROOT } from './support/cli-run';
import { ServerProcesses } from './support/server-process';

const UPSTREAM_KEY = 'sk-otel-upstream-KEY-8841';
const API_TOKEN = 'otel-api-token-5d2f9c';
const MCP_TOKEN = 'otel-mcp-token-77ab1e';
const COLLECTOR_KEY = 'collector-key-3a9f';
const ADMIN_TOKEN = 'otel-admin-token-0c4e';
/** API keys made in the spec: none may reach an export either. */
const madeKeys: string[] = [];
/** Prompt words that must never reach an export (the emulator echoes them, so answers carry them too). */
const PROMPT_MARKER = 'PROMPT-MARKER-q7x2';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number };
  attributes: Record<string, unknown>;
}

const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 };

function plain(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return value.arrayValue.values.map(plain);
  return undefined;
}

/** An OTLP/HTTP receiver (the JSON encoding the http exporters send): every body and its headers, kept raw too. */
class OtlpReceiver {
  readonly bodies: Array<{ path: string; headers: IncomingHttpHeaders; text: string }> = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        receiver.bodies.push({ path: request.url ?? '', headers: request.headers, text: Buffer.concat(chunks).toString() });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  spans(): ExportedSpan[] {
    const spans: ExportedSpan[] = [];
    for (const body of this.bodies.filter((each) => each.path === '/v1/traces')) {
      for (const resource of JSON.parse(body.text).resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            const attributes = Object.fromEntries((span.attributes ?? []).map((a: { key: string; value: OtlpValue }) => [a.key, plain(a.value)]));
            spans.push({ ...span, attributes });
          }
        }
      }
    }
    return spans;
  }

  /** The metric names exported so far, with the attributes of their data points. */
  metrics(): Map<string, Array<Record<string, unknown>>> {
    const metrics = new Map<string, Array<Record<string, unknown>>>();
    for (const body of this.bodies.filter((each) => each.path === '/v1/metrics')) {
      for (const resource of JSON.parse(body.text).resourceMetrics ?? []) {
        for (const scope of resource.scopeMetrics ?? []) {
          for (const metric of scope.metrics ?? []) {
            const points = (metric.histogram ?? metric.sum ?? metric.gauge)?.dataPoints ?? [];
            const list = metrics.get(metric.name) ?? [];
            for (const point of points) {
              list.push(Object.fromEntries((point.attributes ?? []).map((a: { key: string; value: OtlpValue }) => [a.key, plain(a.value)])));
            }
            metrics.set(metric.name, list);
          }
        }
      }
    }
    return metrics;
  }

  /** The spans of one trace, once the server span that `rootName` names has arrived (exports come in batches). */
  async trace(traceId: string, until: (spans: ExportedSpan[]) => boolean): Promise<ExportedSpan[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const spans = this.spans().filter((span) => span.traceId === traceId);
      if (until(spans)) return spans;
      if (Date.now() > deadline) throw new Error(`trace ${traceId} incomplete: ${JSON.stringify(spans.map((s) => s.name))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let receiver: OtlpReceiver;
let openai: OpenAiEmulator;
let deepseek: OpenAiEmulator;
let chat: ScriptedChatEmulator;
let searxng: SearxngEmulator;
let work: string;
let origin: string;
const processes = new ServerProcesses();

beforeAll(async () => {
  buildDistIfStale();
  [receiver, openai, deepseek, chat, searxng] = await Promise.all([
    OtlpReceiver.start(),
    OpenAiEmulator.start({ apiKey: UPSTREAM_KEY }),
    OpenAiEmulator.start({ flavour: 'deepseek', apiKey: UPSTREAM_KEY, chatModels: ['deepseek-chat'] }),
    ScriptedChatEmulator.start('gpt-test'),
    SearxngEmulator.start(),
  ]);
  work = mkdtempSync(join(tmpdir(), 'tollgate-otel-'));
  const config = join(work, 'tollgate.yaml');
  writeFileSync(
    config,
    [
      'version: 1',
      'ai: { retry_attempts: 0, default_provider: openai, enable_fallback: true, fallback_providers: [deepseek] }',
      'agent: { tool_protocol: prompt }',
      'providers:',
      '  openai: { url_env: OPENAI_URL, api_key_env: OPENAI_API_KEY, chat_model: gpt-test }',
      '  deepseek: { url_env: DEEPSEEK_URL, api_key_env: DEEPSEEK_API_KEY, chat_model: deepseek-chat }',
      '  scripted: { kind: openai_compatible, url_env: SCRIPTED_URL, chat_model: gpt-test }',
      `mcp: { enabled: true, token: ${MCP_TOKEN} }`,
      'governance:',
      `  admin_token: ${ADMIN_TOKEN}`,
      '  keys: { store: memory }',
      '  pricing: { models: { "openai/gpt-test": { input: 2, output: 8 } } }',
      '  budgets: { store: memory, rules: [{ scope: tenant, id: poor, tokens: 1, period: day }, { scope: tenant, id: rich, tokens: 100000000, period: day }] }',
      'observability:',
      '  otel:',
      `    endpoint: ${receiver.url}`,
      `    headers: { x-collector-key: ${COLLECTOR_KEY} }`,
      '    metrics_interval: 1',
      '',
    ].join('\n'),
  );
  origin = await processes
    .startNode([join(ROOT, 'dist', 'src', 'main.js'), '--config', config, '--port', '0'], work, {
      env: {
        API_TOKEN,
        OPENAI_API_KEY: UPSTREAM_KEY,
        OPENAI_URL: openai.url,
        DEEPSEEK_API_KEY: UPSTREAM_KEY,
        DEEPSEEK_URL: deepseek.url,
        SCRIPTED_URL: chat.url,
        SEARXNG_URL: searxng.url,
        SEARXNG_ALLOW_PRIVATE_NETWORK: 'true',
        // Exports every 100 ms instead of 5 s, so the spec waits little.
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    })
    .url;
}, 90_000);

afterAll(async () => {
  await processes.stopAll();
  await Promise.all([receiver?.close(), openai?.close(), deepseek?.close(), chat?.close(), searxng?.close()]);
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A caller's W3C trace context, so each request's trace is found by its id. */
function callerContext(): { traceId: string; parentId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

async function post(path: string, body: unknown, traceparent: string, bearer = API_TOKEN): Promise<Response> {
  return fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', traceparent },
    body: JSON.stringify(body),
  });
}

const byKind = (spans: ExportedSpan[], kind: number) => spans.filter((span) => span.kind === kind);
const childrenOf = (spans: ExportedSpan[], parent: ExportedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId);

function serverSpanOf(spans: ExportedSpan[], caller: { parentId: string }): ExportedSpan {
  const [server] = byKind(spans, SPAN_KIND.SERVER);
  expect(server.parentSpanId).toBe(caller.parentId);
  return server;
}

describe('traces over OTLP/HTTP', () => {
  it('a chat: one SERVER span under the caller, one CLIENT attempt span under it, its traceparent sent upstream', async () => {
    const caller = callerContext();
    openai.server.reset();
    const answer = await post('/openai/v1/chat/completions', { model: 'gpt-test', messages: [{ role: 'user', content: `hello ${PROMPT_MARKER}` }] }, caller.traceparent);
    expect(answer.status).toBe(200);
    const spans = await receiver.trace(caller.traceId, (found) => byKind(found, SPAN_KIND.SERVER).length === 1 && byKind(found, SPAN_KIND.CLIENT).length === 1);
    const server = serverSpanOf(spans, caller);
    expect(server.name).toBe('POST /openai/v1/chat/completions');
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/openai/v1/chat/completions', 'http.response.status_code': 200 });
    // The ledger priced the call (2 and 8 USD per million tokens): its cost is on the request's span.
    expect(server.attributes['tollgate.cost_usd']).toBeGreaterThan(0);
    const [attempt] = childrenOf(spans, server);
    expect(attempt.kind).toBe(SPAN_KIND.CLIENT);
    expect(attempt.name).toBe('chat gpt-test');
    expect(attempt.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.model': 'gpt-test',
      'gen_ai.response.finish_reasons': ['stop'],
      'tollgate.provider': 'openai',
      'server.address': '127.0.0.1',
    });
    expect(attempt.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(attempt.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    // The upstream request carried the attempt span's context, not the caller's.
    expect(openai.server.lastRequest?.headers.traceparent).toBe(`00-${caller.traceId}-${attempt.spanId}-01`);
  });

  it('a stream: the attempt span ends with the stream, with its time to first chunk', async () => {
    const caller = callerContext();
    const answer = await post('/openai/v1/chat/completions', { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: `stream ${PROMPT_MARKER}` }] }, caller.traceparent);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('[DONE]');
    const spans = await receiver.trace(caller.traceId, (found) => byKind(found, SPAN_KIND.SERVER).length === 1 && byKind(found, SPAN_KIND.CLIENT).length === 1);
    const server = serverSpanOf(spans, caller);
    const [attempt] = childrenOf(spans, server);
    expect(attempt.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.stream': true, 'gen_ai.response.model': 'gpt-test', 'gen_ai.response.finish_reasons': ['stop'] });
    expect(attempt.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    expect(attempt.attributes['tollgate.stream.cut']).toBeUndefined();
  });

  it('a fallback: two attempt spans, the failed one marked with its error type', async () => {
    const caller = callerContext();
    openai.serverErrorNext(503);
    const answer = await post('/v1/generate', { prompt: `fall back ${PROMPT_MARKER}` }, caller.traceparent);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { provider: string }).provider).toBe('deepseek');
    const spans = await receiver.trace(caller.traceId, (found) => byKind(found, SPAN_KIND.SERVER).length === 1 && byKind(found, SPAN_KIND.CLIENT).length === 2);
    const server = serverSpanOf(spans, caller);
    const attempts = childrenOf(spans, server).sort((a, b) => Number((a as unknown as { startTimeUnixNano: string }).startTimeUnixNano) - Number((b as unknown as { startTimeUnixNano: string }).startTimeUnixNano));
    expect(attempts.map((span) => span.attributes['tollgate.provider'])).toEqual(['openai', 'deepseek']);
    expect(attempts[0].status?.code).toBe(2);
    expect(attempts[0].attributes['error.type']).toEqual(expect.any(String));
    expect(attempts[1].attributes).toMatchObject({ 'gen_ai.provider.name': 'deepseek', 'gen_ai.response.model': 'deepseek-chat' });
    expect(attempts[1].attributes['error.type']).toBeUndefined();
  });

  it('an agent run: invoke_agent under the request, its model turns and its tool call under it', async () => {
    const caller = callerContext();
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('web_search', { query: 'otel' }) : `done ${PROMPT_MARKER}`);
    const answer = await post('/v1/agent', { prompt: `search ${PROMPT_MARKER}`, tools: ['web_search'], provider: 'scripted', max_loops: 3 }, caller.traceparent);
    expect(answer.status).toBe(200);
    const spans = await receiver.trace(caller.traceId, (found) => found.some((span) => span.name === 'invoke_agent tollgate-agent'));
    const server = serverSpanOf(spans, caller);
    const [agent] = childrenOf(spans, server);
    expect(agent).toMatchObject({ name: 'invoke_agent tollgate-agent', kind: SPAN_KIND.INTERNAL });
    expect(agent.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'tollgate.agent.loops_run': 2, 'tollgate.agent.success': true });
    const underAgent = childrenOf(spans, agent);
    expect(underAgent.map((span) => span.name).sort()).toEqual(['chat gpt-test', 'chat gpt-test', 'execute_tool web_search']);
    const tool = underAgent.find((span) => span.name === 'execute_tool web_search')!;
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'web_search' });
    expect(underAgent.filter((span) => span.kind === SPAN_KIND.CLIENT).every((span) => span.attributes['tollgate.provider'] === 'scripted')).toBe(true);
  });

  it('an MCP tool call: execute_tool under the MCP request, the model call under it', async () => {
    const caller = callerContext();
    const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${MCP_TOKEN}`, traceparent: caller.traceparent } },
    });
    const client = new Client({ name: 'otel-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'generate', arguments: { prompt: `mcp ${PROMPT_MARKER}` } });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const spans = await receiver.trace(caller.traceId, (found) => found.some((span) => span.name === 'execute_tool generate') && byKind(found, SPAN_KIND.CLIENT).length === 1);
    const tool = spans.find((span) => span.name === 'execute_tool generate')!;
    const requestSpan = spans.find((span) => span.spanId === tool.parentSpanId)!;
    expect(requestSpan).toMatchObject({ kind: SPAN_KIND.SERVER, name: 'POST /mcp' });
    expect(requestSpan.parentSpanId).toBe(caller.parentId);
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.name': 'generate', 'tollgate.tool.surface': 'mcp' });
    const [attempt] = childrenOf(spans, tool);
    expect(attempt.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai' });
  });

  it("an API key's call: its tenant, key id and the budget's decision on the request's span; a refusal too", async () => {
    const makeKey = async (tenant: string) => {
      const made = await post('/v1/admin/keys', { tenant, name: 'otel' }, callerContext().traceparent, ADMIN_TOKEN);
      expect(made.status).toBe(201);
      const { key, id } = (await made.json()) as { key: string; id: string };
      madeKeys.push(key);
      return { key, id };
    };
    const [rich, poor] = [await makeKey('rich'), await makeKey('poor')];
    const body = { model: 'gpt-test', max_tokens: 50, messages: [{ role: 'user', content: `budget ${PROMPT_MARKER}` }] };

    const allowed = callerContext();
    expect((await post('/openai/v1/chat/completions', body, allowed.traceparent, rich.key)).status).toBe(200);
    const allowedSpans = await receiver.trace(allowed.traceId, (found) => byKind(found, SPAN_KIND.SERVER).length === 1 && byKind(found, SPAN_KIND.CLIENT).length === 1);
    expect(serverSpanOf(allowedSpans, allowed).attributes).toMatchObject({ 'tollgate.tenant': 'rich', 'tollgate.key_id': rich.id, 'tollgate.budget.decision': 'reserved' });
    expect(byKind(allowedSpans, SPAN_KIND.CLIENT)[0].attributes).toMatchObject({ 'tollgate.tenant': 'rich', 'tollgate.key_id': rich.id, 'gen_ai.request.max_tokens': 50 });

    const refused = callerContext();
    expect((await post('/openai/v1/chat/completions', body, refused.traceparent, poor.key)).status).toBe(429);
    const refusedSpans = await receiver.trace(refused.traceId, (found) => byKind(found, SPAN_KIND.SERVER).length === 1);
    expect(serverSpanOf(refusedSpans, refused).attributes).toMatchObject({ 'tollgate.tenant': 'poor', 'tollgate.budget.decision': 'refused', 'http.response.status_code': 429 });
    expect(byKind(refusedSpans, SPAN_KIND.CLIENT)).toEqual([]);
  });

  it('GenAI metrics reach the collector, with the configured headers', async () => {
    const deadline = Date.now() + 10_000;
    while (!receiver.metrics().has('gen_ai.server.time_to_first_token') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const metrics = receiver.metrics();
    expect(metrics.get('gen_ai.client.token.usage')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ 'gen_ai.token.type': 'input', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-test' }),
        expect.objectContaining({ 'gen_ai.token.type': 'output', 'gen_ai.provider.name': 'openai' }),
      ]),
    );
    expect(metrics.get('gen_ai.server.request.duration')).toEqual(expect.arrayContaining([expect.objectContaining({ 'gen_ai.operation.name': 'chat' })]));
    expect(metrics.get('gen_ai.server.request.duration')).toEqual(expect.arrayContaining([expect.objectContaining({ 'error.type': expect.any(String) })]));
    expect(metrics.get('gen_ai.server.time_to_first_token')).toEqual(expect.arrayContaining([expect.objectContaining({ 'gen_ai.request.model': 'gpt-test' })]));
    expect(receiver.bodies.every((body) => body.headers['x-collector-key'] === COLLECTOR_KEY)).toBe(true);
  });

  it('no credential, prompt or answer anywhere in the export', () => {
    expect(receiver.bodies.length).toBeGreaterThan(0);
    const exported = receiver.bodies.map((body) => body.text).join('\n');
    expect(madeKeys).toHaveLength(2);
    for (const secret of [UPSTREAM_KEY, API_TOKEN, MCP_TOKEN, ADMIN_TOKEN, COLLECTOR_KEY, PROMPT_MARKER, 'echo:', ...madeKeys]) expect(exported).not.toContain(secret);
    expect(exported.toLowerCase()).not.toContain('authorization');
    expect(exported).not.toContain('gen_ai.input.messages');
  });
});

describe('tracing off', () => {
  // prom-client loads @opentelemetry/api (for its exemplars) with or without tracing: the API alone is a no-op.
  it("loads nothing of OpenTelemetry's SDK, exporters or Tollgate's tracing", () => {
    const script = [
      "const { loadConfig } = require('./dist/src/config/config.loader');",
      "const { createHttpApp } = require('./dist/src/server/http-server');",
      "createHttpApp(loadConfig({ cwd: process.cwd(), env: { PATH: process.env.PATH } }), false).then(async (app) => {",
      '  await app.init();',
      "  const loaded = Object.keys(require.cache).filter((file) => (file.includes('@opentelemetry') && !file.includes('@opentelemetry/api/')) || /otel-runtime|traced-provider|gen-ai-metrics/.test(file));",
      '  await app.close();',
      '  process.stdout.write(JSON.stringify(loaded));',
      '});',
    ].join('\n');
    const loaded = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, env: { PATH: process.env.PATH }, encoding: 'utf8' }));
    expect(loaded).toEqual([]);
  });
});
