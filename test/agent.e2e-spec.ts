/**
 * The agent core against a scripted OpenAI-wire emulator and a SearXNG emulator on loopback: the answer
 * and action protocol, limits, failure categories, veto, telemetry, principal isolation between
 * interleaved runs, and the JSONL audit sink under many parallel runs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toClientOptions } from '../src/ai/ai.module';
import { AiClient } from '../src/ai/client/ai-client';
import { ProviderRegistry } from '../src/ai/client/provider-registry';
import { AgentProtocolError } from '../src/ai/agent/agent-errors';
import { resolveAgentLimits, type AgentLimits } from '../src/ai/agent/agent-limits';
import type { AgentTelemetryEvent, AgentTelemetryHook } from '../src/ai/agent/agent-telemetry';
import type { AgentAuthorizer, AgentTool } from '../src/ai/agent/agent-tool.interface';
import { AgentToolset, searchAgentTools } from '../src/ai/agent/agent-toolset';
import { AgentService } from '../src/ai/agent/agent.service';
import { JsonlAuditSink } from '../src/ai/agent/jsonl-audit-sink';
import { ConnectionError, InvalidRequestError, UnknownProviderError } from '../src/ai/errors';
import { SearchService } from '../src/ai/tools/search.service';
import { ToolNotConfiguredError } from '../src/ai/tools/tool-errors';
import { utf8Length } from '../src/ai/agent/utf8-truncate';
import { SearxngEmulator } from './emulators/searxng-emulator';
import { actionBlock, observationsIn, ScriptedChatEmulator } from './emulators/scripted-chat-emulator';

const SECRET_TEXT = 'INTERNAL-DETAIL-db01.corp:5432-9c1e';
const TASK_MARKER = 'TASK-TEXT-MARKER-41d2';

let chat: ScriptedChatEmulator;
let searxng: SearxngEmulator;
let client: AiClient;
let search: SearchService;
let work: string;

/** Generic tools: echo the caller's principal, a big multi-byte text, failures. */
const calls: Array<{ tool: string; principal?: string; args: Record<string, unknown> }> = [];
const genericTools: AgentTool[] = [
  {
    name: 'whoami',
    description: 'Tells who is asking.',
    parameters: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'], additionalProperties: false },
    call: async ({ args, context }) => {
      calls.push({ tool: 'whoami', principal: context.principal, args });
      // Random delays interleave concurrent runs.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
      return { principal: context.principal, tenant: context.tenantId, tag: args.tag };
    },
  },
  {
    name: 'big_text',
    description: 'Returns a long multi-byte text.',
    parameters: { type: 'object', additionalProperties: false },
    call: async () => '日本語€😀"'.repeat(5000),
  },
  {
    name: 'flaky',
    description: 'Fails in the way it is asked to.',
    parameters: { type: 'object', properties: { mode: { enum: ['connection', 'internal'] } }, required: ['mode'] },
    call: async ({ args }) => {
      calls.push({ tool: 'flaky', args });
      if (args.mode === 'connection') throw new ConnectionError(`connection refused by ${SECRET_TEXT}`);
      throw new Error(`stack trace mentioning ${SECRET_TEXT}`);
    },
  },
];

beforeAll(async () => {
  [chat, searxng] = await Promise.all([ScriptedChatEmulator.start(), SearxngEmulator.start()]);
  const providers = [{ name: 'scripted', kind: 'openai_compatible' as const, url: chat.url, chatModel: 'agent-model', timeoutMs: 2000 }];
  client = new AiClient(ProviderRegistry.fromSettings(providers), toClientOptions({ providers, retryAttempts: 0 }));
  search = SearchService.fromOptions({ tools: [{ name: 'web_search', kind: 'searxng', url: searxng.url, allowPrivateNetwork: true, timeoutMs: 2000 }] }, client);
  work = mkdtempSync(join(tmpdir(), 'tollgate-agent-'));
});

afterAll(async () => {
  await Promise.all([client.close(), search.close(), chat.close(), searxng.close()]);
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  chat.reset();
  searxng.reset();
  calls.length = 0;
});

function agent(options: { limits?: Partial<AgentLimits>; telemetry?: AgentTelemetryHook[]; authorize?: AgentAuthorizer } = {}): AgentService {
  const toolset = new AgentToolset([...searchAgentTools(search), ...genericTools]);
  // The prompt protocol whatever the adapter translates: test/agent-native-tools.e2e-spec.ts covers native tool calling.
  return new AgentService(client, toolset, { limits: resolveAgentLimits(options.limits), toolProtocol: 'prompt', telemetry: options.telemetry, authorize: options.authorize });
}

const context = { requestId: 'req-1', tenantId: 't-1', principal: 'user-1' };

async function protocolViolation(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(AgentProtocolError);
  return (error as AgentProtocolError).violation;
}

describe('agent runs', () => {
  it('returns a direct answer in one loop, with the tools and protocol in the system prompt', async () => {
    chat.script = () => 'Paris.';
    const result = await agent().run('What is the capital of France?', { tools: ['web_search'], context });
    expect(result).toEqual({ response: 'Paris.', provider: 'scripted', model: 'agent-model', loopsRun: 1, success: true, actions: [] });
    expect(chat.turns).toHaveLength(1);
    expect(chat.turns[0].system).toContain('{"action": "<tool name>", "args"');
    expect(chat.turns[0].system).toContain('- web_search:');
    expect(chat.turns[0].system).not.toContain('whoami');
    expect(chat.turns[0].user).toContain('What is the capital of France?');
  });

  it('calls one search tool, shows the model the results, then answers', async () => {
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('web_search', { query: 'capital of France', limit: 2 }) : 'Paris, per the results.');
    const result = await agent().run('What is the capital of France?', { tools: ['web_search'], context });
    expect(result.success).toBe(true);
    expect(result.loopsRun).toBe(2);
    expect(result.response).toBe('Paris, per the results.');
    expect(result.actions).toEqual([{ loop: 1, tool: 'web_search', outcome: 'ok', durationMs: expect.any(Number), truncated: false }]);
    expect(searxng.server.requestsTo('/search')[0].query.get('q')).toBe('capital of France');
    const [observation] = observationsIn(chat.turns[1].user);
    expect(observation).toMatchObject({ tool: 'web_search', ok: true });
    expect((observation.result as unknown[]).length).toBe(2);
  });

  it('stops with a typed error on malformed, multiple and unknown actions, without calling a tool', async () => {
    const service = agent();
    chat.script = () => '```json\n{"action": "whoami", "args": {"tag": \n```';
    expect(await protocolViolation(service.run('task', { tools: ['whoami'], context }))).toBe('invalid_json');
    chat.script = () => `${actionBlock('whoami', { tag: 'a' })}\n${actionBlock('whoami', { tag: 'b' })}`;
    expect(await protocolViolation(service.run('task', { tools: ['whoami'], context }))).toBe('multiple_actions');
    chat.script = () => '```json\n{"action":"whoami","args":{"tag":"a"},"why":"x"}\n```';
    expect(await protocolViolation(service.run('task', { tools: ['whoami'], context }))).toBe('unknown_keys');
    // Registered, but not allowlisted for this run.
    chat.script = () => actionBlock('flaky', { mode: 'internal' });
    expect(await protocolViolation(service.run('task', { tools: ['whoami'], context }))).toBe('unknown_tool');
    chat.script = () => actionBlock('rm_rf', {});
    expect(await protocolViolation(service.run('task', { tools: [], context }))).toBe('unknown_tool');
    chat.script = () => actionBlock('whoami', { tag: 'x'.repeat(200) });
    expect(await protocolViolation(agent({ limits: { maxActionBytes: 100 } }).run('task', { tools: ['whoami'], context }))).toBe('action_too_large');
    expect(calls).toEqual([]);
  });

  it('stops at the loop limit with success false, and asks for an answer on the last turn', async () => {
    const events: AgentTelemetryEvent[] = [];
    chat.script = () => actionBlock('whoami', { tag: 'again' });
    const result = await agent({ telemetry: [(e) => void events.push(e)] }).run('task', { tools: ['whoami'], maxLoops: 3, context });
    expect(result).toMatchObject({ success: false, response: '', loopsRun: 3 });
    expect(result.actions).toHaveLength(3);
    expect(chat.turns).toHaveLength(3);
    expect(chat.turns[2].user).toContain('This is your last turn');
    expect(chat.turns[1].user).not.toContain('This is your last turn');
    expect(events.at(-1)).toMatchObject({ event: 'agent.max_loops_exceeded', loopsRun: 3, maxLoops: 3 });
  });

  it('cuts an oversized multi-byte observation on a character boundary, as valid JSON within the limit', async () => {
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('big_text', {}) : 'done');
    const result = await agent({ limits: { maxObservationBytes: 1001 } }).run('task', { tools: ['big_text'], context });
    expect(result.actions[0]).toMatchObject({ tool: 'big_text', outcome: 'ok', truncated: true });
    const line = /Observation:\n(.*)\n/.exec(chat.turns[1].user)![1];
    expect(utf8Length(line)).toBeLessThanOrEqual(1001);
    expect(utf8Length(line)).toBeGreaterThan(990);
    const observation = JSON.parse(line);
    expect(observation).toMatchObject({ tool: 'big_text', ok: true, truncated: true });
    expect(observation.content).not.toContain('\uFFFD');
    expect('日本語€😀"'.repeat(5000).startsWith(observation.content)).toBe(true);
  });

  it('shows tool failures to the model as categories, never their text', async () => {
    searxng.rateLimitNext();
    const steps = [
      actionBlock('web_search', { query: 'q' }),
      actionBlock('flaky', { mode: 'connection' }),
      actionBlock('flaky', { mode: 'internal' }),
      actionBlock('whoami', { tag: 7 }),
    ];
    chat.script = ({ user }) => steps[observationsIn(user).length] ?? 'gave up';
    const result = await agent().run('task', { tools: ['web_search', 'flaky', 'whoami'], context });
    expect(result.response).toBe('gave up');
    expect(result.actions.map((a) => [a.tool, a.outcome, a.error])).toEqual([
      ['web_search', 'failed', 'rate_limited'],
      ['flaky', 'failed', 'tool_unavailable'],
      ['flaky', 'failed', 'tool_error'],
      ['whoami', 'failed', 'invalid_arguments'],
    ]);
    expect(observationsIn(chat.turns[4].user).map((o) => o.error)).toEqual(['rate_limited', 'tool_unavailable', 'tool_error', 'invalid_arguments']);
    expect(chat.turns.map((t) => t.user).join('\n')).not.toContain(SECRET_TEXT);
    // ajv refused the arguments: whoami never ran.
    expect(calls.filter((c) => c.tool === 'whoami')).toEqual([]);
  });

  it('lets the authorization callback veto a call, which the model sees as forbidden', async () => {
    const seen: Array<{ tool: string; principal?: string }> = [];
    const authorize: AgentAuthorizer = ({ tool, context: who }) => {
      seen.push({ tool, principal: who.principal });
      return who.principal !== 'mallory';
    };
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('whoami', { tag: 'x' }) : JSON.stringify(observationsIn(user)[0]));
    const denied = await agent({ authorize }).run('task', { tools: ['whoami'], context: { requestId: 'r', principal: 'mallory' } });
    expect(denied.actions[0]).toMatchObject({ outcome: 'vetoed', error: 'forbidden' });
    expect(JSON.parse(denied.response)).toEqual({ tool: 'whoami', ok: false, error: 'forbidden' });
    expect(calls).toEqual([]);
    const allowed = await agent({ authorize }).run('task', { tools: ['whoami'], context: { requestId: 'r', principal: 'alice' } });
    expect(allowed.actions[0].outcome).toBe('ok');
    expect(seen).toEqual([{ tool: 'whoami', principal: 'mallory' }, { tool: 'whoami', principal: 'alice' }]);
    const throwing = await agent({ authorize: () => { throw new Error('policy store down'); } }).run('task', { tools: ['whoami'], context });
    expect(throwing.actions[0].outcome).toBe('vetoed');
  });

  it('refuses bad runs before calling the provider, with init_failed telemetry', async () => {
    const events: AgentTelemetryEvent[] = [];
    const service = agent({ limits: { maxTaskBytes: 10 }, telemetry: [(e) => void events.push(e)] });
    await expect(service.run('€€€€', { tools: [], context })).rejects.toThrow(new InvalidRequestError('prompt must be at most 10 bytes'));
    await expect(service.run('task', { tools: ['nope'], context })).rejects.toBeInstanceOf(ToolNotConfiguredError);
    await expect(service.run('task', { tools: [], provider: 'ghost', context })).rejects.toBeInstanceOf(UnknownProviderError);
    await expect(service.run('task', { tools: [], maxLoops: 6, context })).rejects.toThrow('max_loops must be an integer from 1 to 5');
    expect(chat.turns).toEqual([]);
    expect(events.map((e) => [e.event, e.category])).toEqual([
      ['agent.init_failed', 'invalid_request'],
      ['agent.init_failed', 'tool_not_configured'],
      ['agent.init_failed', 'unknown_provider'],
      ['agent.init_failed', 'invalid_request'],
    ]);
  });

  it('reports a provider failure as agent.failed and rethrows the typed error', async () => {
    const events: AgentTelemetryEvent[] = [];
    chat.server.failNext(503, { body: { error: { message: SECRET_TEXT } } });
    await expect(agent({ telemetry: [(e) => void events.push(e)] }).run('task', { tools: [], context })).rejects.toMatchObject({ type: 'provider_error' });
    expect(events).toEqual([expect.objectContaining({ event: 'agent.failed', category: 'provider_error', loop: 1 })]);
  });
});

describe('agent telemetry', () => {
  it('carries loops, tool names, durations and categories, never the task, arguments or answers; failing hooks are ignored', async () => {
    const events: AgentTelemetryEvent[] = [];
    const hooks: AgentTelemetryHook[] = [
      () => { throw new Error('broken hook'); },
      async () => { throw new Error('broken async hook'); },
      (e) => void events.push(e),
    ];
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('whoami', { tag: 'ARG-VALUE-77' }) : 'ANSWER-TEXT-99');
    const result = await agent({ telemetry: hooks }).run(`${TASK_MARKER} please`, { tools: ['whoami'], context });
    expect(result.success).toBe(true);
    expect(events.map((e) => e.event)).toEqual(['agent.iteration', 'agent.tool_call', 'agent.iteration', 'agent.completed']);
    const runIds = new Set(events.map((e) => e.runId));
    expect(runIds.size).toBe(1);
    expect(events[1]).toMatchObject({ tool: 'whoami', outcome: 'ok', loop: 1, maxLoops: 5, requestId: 'req-1', tenantId: 't-1', principal: 'user-1', provider: 'scripted' });
    expect(events[3]).toMatchObject({ loopsRun: 2, durationMs: expect.any(Number) });
    const text = JSON.stringify(events);
    for (const secret of [TASK_MARKER, 'ARG-VALUE-77', 'ANSWER-TEXT-99', 'principal":"user-1","tag']) expect(text).not.toContain(secret);
  });
});

describe('concurrency', () => {
  it('never lets interleaved runs see each other\'s principal', async () => {
    // Each run's task carries its tag; the model asks whoami with it and answers with what came back.
    chat.script = ({ user }) => {
      const tag = /RUN-(\d+)/.exec(user)![1];
      const [observation] = observationsIn(user);
      return observation ? JSON.stringify(observation.result) : actionBlock('whoami', { tag });
    };
    const service = agent();
    const runs = Array.from({ length: 30 }, (_, i) =>
      service.run(`RUN-${i} who am I?`, { tools: ['whoami'], context: { requestId: `req-${i}`, tenantId: `tenant-${i}`, principal: `principal-${i}` } }),
    );
    const results = await Promise.all(runs);
    results.forEach((result, i) => {
      expect(JSON.parse(result.response)).toEqual({ principal: `principal-${i}`, tenant: `tenant-${i}`, tag: String(i) });
    });
    for (const call of calls) expect(call.principal).toBe(`principal-${call.args.tag}`);
    expect(calls).toHaveLength(30);
  });

  it('writes one valid, whole JSON line per event to the audit log under many parallel runs', async () => {
    const file = join(work, 'audit.jsonl');
    const sink = new JsonlAuditSink(file);
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('big_text', {}) : 'done');
    const service = agent({ telemetry: [sink.hook] });
    const runs = 60;
    await Promise.all(Array.from({ length: runs }, (_, i) => service.run('task', { tools: ['big_text'], context: { requestId: `audit-${i}`, principal: `p-${i}` } })));
    await sink.close();
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(runs * 4);
    const events = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const perRun = new Map<string, string[]>();
    for (const event of events) {
      expect(event).toEqual(expect.objectContaining({ run_id: expect.any(String), request_id: expect.stringMatching(/^audit-\d+$/), time: expect.any(String) }));
      perRun.set(event.run_id as string, [...(perRun.get(event.run_id as string) ?? []), event.event as string]);
    }
    expect(perRun.size).toBe(runs);
    for (const names of perRun.values()) expect(names).toEqual(['agent.iteration', 'agent.tool_call', 'agent.iteration', 'agent.completed']);
    expect(sink.failedWrites).toBe(0);
  });
});
