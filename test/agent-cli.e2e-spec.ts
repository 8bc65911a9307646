/**
 * `tollgate agent` as a subprocess of the built CLI against a scripted OpenAI-wire emulator and a SearXNG
 * emulator on loopback: text and JSON output, repeated --tool, --max-loops, exit codes 0/1/2.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { actionBlock, observationsIn, ScriptedChatEmulator } from './emulators/scripted-chat-emulator';
import { SearxngEmulator } from './emulators/searxng-emulator';
import { buildDistIfStale, runCli } from './support/cli-run';

let work: string;
let chat: ScriptedChatEmulator;
let searxng: SearxngEmulator;

function tollgate(args: string[], stdin?: string) {
  const env = {
    OPENAI_API_KEY: 'sk-agent-cli',
    OPENAI_URL: chat.url,
    OPENAI_CHAT_MODEL: 'gpt-test',
    SEARXNG_URL: searxng.url,
    SEARXNG_ALLOW_PRIVATE_NETWORK: 'true',
    // The prompt protocol whatever the adapter translates: test/agent-native-tools.e2e-spec.ts covers native tool calling.
    TOLLGATE_CONFIG: join(work, 'prompt-protocol.yaml'),
  };
  return runCli(args, { cwd: work, env, stdin });
}

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-agent-cli-'));
  writeFileSync(join(work, 'prompt-protocol.yaml'), 'version: 1\nagent: { tool_protocol: prompt }\n');
  [chat, searxng] = await Promise.all([ScriptedChatEmulator.start('gpt-test'), SearxngEmulator.start()]);
}, 120_000);

afterAll(async () => {
  await Promise.all([chat.close(), searxng.close()]);
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  chat.reset();
  searxng.reset();
});

describe('tollgate agent', () => {
  it('prints a direct answer', async () => {
    chat.script = () => 'Forty-two.';
    const run = await tollgate(['agent', 'What is six times seven?']);
    expect(run).toMatchObject({ status: 0, stdout: 'Forty-two.\n', stderr: '' });
    expect(chat.turns[0].system).toContain('No tools are available');
  });

  it('reads the task from stdin, allows repeated --tool and prints JSON', async () => {
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('web_search', { query: 'rust', limit: 1 }) : 'Done.');
    const run = await tollgate(['agent', '--tool', 'web_search', '--tool', 'web_search_two', '--format', 'json'], 'Find rust\n');
    // web_search_two is not configured: a usage error before the provider is called.
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("tool 'web_search_two' is not configured");
    expect(chat.turns).toEqual([]);

    const ok = await tollgate(['agent', '--tool', 'web_search', '--format', 'json', '--max-loops', '2'], 'Find rust\n');
    expect(ok.status).toBe(0);
    const body = JSON.parse(ok.stdout);
    expect(body).toMatchObject({ response: 'Done.', provider: 'openai', loops_run: 2, success: true, actions: [{ tool: 'web_search', outcome: 'ok' }] });
    expect(chat.turns[0].user).toContain('Task:\nFind rust\n');
  });

  it('exits 1 at the loop limit, listing what it did', async () => {
    chat.script = () => actionBlock('web_search', { query: 'again' });
    const run = await tollgate(['agent', 'loop forever', '--tool', 'web_search', '--max-loops', '2']);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('loop 1: web_search ok\nloop 2: web_search ok\n');
    expect(run.stderr).toBe('tollgate: agent: stopped at the loop limit (2 loops) without an answer\n');
  });

  it('exits 1 on a broken action protocol', async () => {
    chat.script = () => '```json\n{"action": "web_search", "args": \n```';
    const run = await tollgate(['agent', 'go', '--tool', 'web_search']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('tollgate: the action is not valid JSON\n');
  });

  it('exits 2 on bad options and bounds', async () => {
    for (const [args, says] of [
      [['agent', 'x', '--max-loops', 'many'], '--max-loops must be a positive integer'],
      [['agent', 'x', '--max-loops', '9'], 'max_loops must be an integer from 1 to 5'],
      [['agent', 'x', '--tool', 'bad name'], '--tool must be a tool name'],
      [['agent', 'x', '--provider', 'ghost'], "unknown provider 'ghost'"],
      [['agent', ' '], 'agent: TEXT is empty'],
    ] as const) {
      const run = await tollgate([...args]);
      expect({ args, status: run.status }).toEqual({ args, status: 2 });
      expect(run.stderr).toContain(says);
    }
    expect(chat.turns).toEqual([]);
  });

  it('writes the configured audit log', async () => {
    writeFileSync(join(work, 'tollgate.yaml'), 'version: 1\nagent: { audit_log: audit.jsonl, tool_protocol: prompt }\n');
    chat.script = () => 'ok';
    const run = await tollgate(['agent', 'audited task', '--config', 'tollgate.yaml']);
    expect(run.status).toBe(0);
    const lines = readFileSync(join(work, 'audit.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.event)).toEqual(['agent.iteration', 'agent.completed']);
    expect(lines[0].request_id).toMatch(/^cli-/);
    rmSync(join(work, 'tollgate.yaml'));
  });
});
