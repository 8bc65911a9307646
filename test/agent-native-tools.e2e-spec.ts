/**
 * The agent on native tool calling, against the scripted OpenAI-wire emulator: what reaches the upstream
 * (tools, tool_choice, assistant tool_calls and tool messages), the same bounds,
 * violations and telemetry as the prompt protocol. That part runs when the openai_compatible adapter translates
 * tools (until then the agent uses the prompt protocol there and it is skipped); the Gemini part runs now.
 */
import { toClientOptions } from '../src/ai/ai.module';
import { AgentProtocolError } from '../src/ai/agent/agent-errors';
import { resolveAgentLimits } from '../src/ai/agent/agent-limits';
import type { AgentTelemetryEvent } from '../src/ai/agent/agent-telemetry';
import type { AgentTool } from '../src/ai/agent/agent-tool.interface';
import { AgentToolset, searchAgentTools } from '../src/ai/agent/agent-toolset';
import { AgentService } from '../src/ai/agent/agent.service';
import { AiClient } from '../src/ai/client/ai-client';
import { ProviderRegistry } from '../src/ai/client/provider-registry';
import { ConnectionError } from '../src/ai/errors';
import { SearchService } from '../src/ai/tools/search.service';
import { GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { ScriptedChatEmulator } from './emulators/scripted-chat-emulator';
import { SearxngEmulator } from './emulators/searxng-emulator';

const settings = (url: string) => [{ name: 'scripted', kind: 'openai_compatible' as const, url, chatModel: 'agent-model', timeoutMs: 2000 }];
const nativeTools = new AiClient(ProviderRegistry.fromSettings(settings('http://127.0.0.1:9/v1')), toClientOptions({ providers: settings('http://127.0.0.1:9/v1') })).supportsFeature('tools');

let chat: ScriptedChatEmulator;
let searxng: SearxngEmulator;
let client: AiClient;
let search: SearchService;
const calls: Array<{ tool: string; args: Record<string, unknown> }> = [];
const tools: AgentTool[] = [
  {
    name: 'whoami',
    description: 'Tells who is asking.',
    parameters: { type: 'object', properties: { tag: { type: 'string' } }, additionalProperties: false },
    call: async ({ args, context }) => {
      calls.push({ tool: 'whoami', args });
      return { principal: context.principal, tag: args.tag };
    },
  },
  {
    name: 'flaky',
    description: 'Fails.',
    parameters: { type: 'object' },
    call: async ({ args }) => {
      calls.push({ tool: 'flaky', args });
      throw new ConnectionError('connection refused by db01.corp');
    },
  },
];
const context = { requestId: 'req-native', tenantId: 't-1', principal: 'user-1' };

function agent(telemetry: AgentTelemetryEvent[] = [], maxLoops?: number): AgentService {
  return new AgentService(client, new AgentToolset([...searchAgentTools(search), ...tools]), {
    limits: resolveAgentLimits({ maxLoops }),
    telemetry: [(event) => void telemetry.push(event)],
  });
}

/** The chat completion bodies that reached the upstream, in order. */
const upstreamBodies = () => chat.server.requestsTo('/v1/chat/completions').map((request) => request.body as Record<string, any>);

async function violation(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AgentProtocolError);
  return (error as AgentProtocolError).violation;
}

(nativeTools ? describe : describe.skip)('agent on native tool calling', () => {
  beforeAll(async () => {
    [chat, searxng] = await Promise.all([ScriptedChatEmulator.start(), SearxngEmulator.start()]);
    const providers = settings(chat.url);
    client = new AiClient(ProviderRegistry.fromSettings(providers), toClientOptions({ providers, retryAttempts: 0 }));
    search = SearchService.fromOptions({ tools: [{ name: 'web_search', kind: 'searxng', url: searxng.url, allowPrivateNetwork: true, timeoutMs: 2000 }] }, client);
  });
  afterAll(() => Promise.all([client.close(), search.close(), chat.close(), searxng.close()]));
  beforeEach(() => {
    chat.reset();
    searxng.reset();
    calls.length = 0;
  });

  it('sends the allowlist as tools, answers the call with a tool message, then takes the answer', async () => {
    chat.script = ({ toolResults }) =>
      toolResults.length === 0 ? { content: null, toolCalls: [{ id: 'call_abc', name: 'web_search', arguments: '{"query":"capital of France","limit":2}' }] } : 'Paris, per the results.';
    const events: AgentTelemetryEvent[] = [];
    const result = await agent(events).run('What is the capital of France?', { tools: ['web_search'], context });
    expect(result).toEqual({
      response: 'Paris, per the results.',
      provider: 'scripted',
      model: 'agent-model',
      loopsRun: 2,
      success: true,
      actions: [{ loop: 1, tool: 'web_search', outcome: 'ok', durationMs: expect.any(Number), truncated: false }],
    });
    expect(searxng.server.requestsTo('/search')[0].query.get('q')).toBe('capital of France');
    const [first, second] = upstreamBodies();
    expect(first.tools).toEqual([
      { type: 'function', function: { name: 'web_search', description: expect.stringContaining("Web search through 'web_search'"), parameters: expect.objectContaining({ required: ['query'] }) } },
    ]);
    expect(first.tool_choice).toBe('auto');
    expect(first).not.toHaveProperty('parallel_tool_calls');
    expect(first.messages).toEqual([
      { role: 'system', content: expect.stringContaining('at most one tool call per turn') },
      { role: 'user', content: 'What is the capital of France?' },
    ]);
    expect(first.messages[0].content).not.toContain('"action"');
    expect(second.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'web_search', arguments: '{"query":"capital of France","limit":2}' } }],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: expect.any(String) },
    ]);
    expect(JSON.parse(second.messages[3].content)).toMatchObject({ tool: 'web_search', ok: true, result: [expect.any(Object), expect.any(Object)] });
    expect(events.map((event) => event.event)).toEqual(['agent.iteration', 'agent.tool_call', 'agent.iteration', 'agent.completed']);
  });

  it('calls a tool whose arguments are empty with {} and shows a failure only by its category', async () => {
    chat.script = ({ toolResults }) =>
      toolResults.length === 0
        ? { toolCalls: [{ name: 'whoami', arguments: '' }] }
        : toolResults.length === 1
          ? { content: 'Trying the other one.', toolCalls: [{ name: 'flaky', arguments: '{}' }] }
          : 'done';
    const result = await agent().run('task', { tools: ['whoami', 'flaky'], context });
    expect(calls).toEqual([{ tool: 'whoami', args: {} }, { tool: 'flaky', args: {} }]);
    expect(result.actions.map((action) => [action.tool, action.outcome, action.error])).toEqual([
      ['whoami', 'ok', undefined],
      ['flaky', 'failed', 'tool_unavailable'],
    ]);
    const last = upstreamBodies()[2];
    expect(last.messages[4]).toMatchObject({ role: 'assistant', content: 'Trying the other one.' });
    expect(JSON.parse(last.messages[5].content)).toEqual({ tool: 'flaky', ok: false, error: 'tool_unavailable' });
    expect(JSON.stringify(last)).not.toContain('db01.corp');
  });

  it('stops on several calls in one turn, a tool outside the allowlist and arguments that are not a JSON object, calling nothing', async () => {
    chat.script = () => ({ toolCalls: [{ name: 'whoami', arguments: '{}' }, { name: 'whoami', arguments: '{"tag":"b"}' }] });
    expect(await violation(agent().run('task', { tools: ['whoami'], context }))).toBe('multiple_actions');
    chat.script = () => ({ toolCalls: [{ name: 'flaky', arguments: '{}' }] });
    expect(await violation(agent().run('task', { tools: ['whoami'], context }))).toBe('unknown_tool');
    chat.script = () => ({ toolCalls: [{ name: 'whoami', arguments: '{"tag":' }] });
    expect(await violation(agent().run('task', { tools: ['whoami'], context }))).toBe('invalid_json');
    chat.script = () => ({ toolCalls: [{ name: 'whoami', arguments: '[1]' }] });
    expect(await violation(agent().run('task', { tools: ['whoami'], context }))).toBe('invalid_action');
    expect(calls).toEqual([]);
  });

  it('forbids tool calls on the last turn with tool_choice none, and reports the loop limit', async () => {
    chat.script = () => ({ toolCalls: [{ name: 'whoami', arguments: '{"tag":"again"}' }] });
    const events: AgentTelemetryEvent[] = [];
    const result = await agent(events, 2).run('task', { tools: ['whoami'], context });
    expect(result).toMatchObject({ response: '', success: false, loopsRun: 2 });
    expect(upstreamBodies().map((body) => body.tool_choice)).toEqual(['auto', 'none']);
    expect(events.at(-1)).toMatchObject({ event: 'agent.max_loops_exceeded', loopsRun: 2 });
  });

  it('keeps the prompt protocol for a run without tools', async () => {
    chat.script = () => 'Forty-two.';
    await expect(agent().run('task', { tools: [], context })).resolves.toMatchObject({ response: 'Forty-two.', success: true });
    expect(upstreamBodies()[0].tools).toBeUndefined();
    expect(upstreamBodies()[0].messages[0].content).toContain('No tools are available');
  });
});

/** The Gemini adapter translates tools: a run through it, with what reached the upstream in Gemini's own format. */
describe('agent on native tool calling through the Gemini adapter', () => {
  let gemini: GeminiEmulator;
  let geminiClient: AiClient;

  beforeAll(async () => {
    gemini = await startGeminiEmulator({ reply: 'You are user-1.', functionCalls: [{ name: 'whoami', args: { tag: 'g' } }] });
    const providers = [{ name: 'gemini', kind: 'gemini' as const, url: gemini.url, apiKey: GEMINI_EMULATOR_KEY, chatModel: 'gemini-2.5-flash', timeoutMs: 2000 }];
    geminiClient = new AiClient(ProviderRegistry.fromSettings(providers), toClientOptions({ providers, retryAttempts: 0 }));
  });
  afterAll(() => Promise.all([geminiClient.close(), gemini.close()]));
  beforeEach(() => {
    calls.length = 0;
    gemini.server.reset();
  });

  const geminiAgent = (events: AgentTelemetryEvent[] = [], maxLoops?: number) =>
    new AgentService(geminiClient, new AgentToolset(tools), { limits: resolveAgentLimits({ maxLoops }), telemetry: [(event) => void events.push(event)] });
  const geminiBodies = () => gemini.server.requests.filter((request) => request.method === 'POST').map((request) => request.body as Record<string, any>);

  it('declares the tools, runs the functionCall and answers it with a functionResponse', async () => {
    const events: AgentTelemetryEvent[] = [];
    const result = await geminiAgent(events).run('Who am I?', { tools: ['whoami'], context });
    expect(result).toMatchObject({ response: 'You are user-1.', provider: 'gemini', loopsRun: 2, success: true, actions: [{ loop: 1, tool: 'whoami', outcome: 'ok' }] });
    expect(calls).toEqual([{ tool: 'whoami', args: { tag: 'g' } }]);
    const [first, second] = geminiBodies();
    expect(first.tools).toEqual([{ functionDeclarations: [expect.objectContaining({ name: 'whoami', description: 'Tells who is asking.' })] }]);
    expect(first.systemInstruction.parts[0].text).toContain('at most one tool call per turn');
    expect(first.contents).toEqual([{ role: 'user', parts: [{ text: 'Who am I?' }] }]);
    expect(second.contents.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: expect.objectContaining({ name: 'whoami', args: { tag: 'g' } }) }] },
      { role: 'user', parts: [{ functionResponse: expect.objectContaining({ name: 'whoami', response: expect.any(Object) }) }] },
    ]);
    expect(JSON.stringify(second.contents[2])).toContain('user-1');
    expect(events.map((event) => event.event)).toEqual(['agent.iteration', 'agent.tool_call', 'agent.iteration', 'agent.completed']);
  });

  it('forbids calls on the last turn with mode NONE', async () => {
    const result = await geminiAgent([], 1).run('Who am I?', { tools: ['whoami'], context });
    expect(result).toMatchObject({ response: 'You are user-1.', success: true, loopsRun: 1 });
    expect(geminiBodies()[0].toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(calls).toEqual([]);
  });
});
