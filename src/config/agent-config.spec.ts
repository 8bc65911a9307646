import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_AGENT_LIMITS } from '../ai/agent/agent-limits';
import { DEFAULT_MCP_SETTINGS } from '../ai/mcp/mcp-settings';
import { problemsOf } from '../../test/support/config-problems';
import { loadConfig } from './config.loader';

describe('agent and mcp configuration', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-agent-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const load = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
    writeFileSync(join(dir, 'tollgate.yaml'), yaml);
    return loadConfig({ cwd: dir, configPath: 'tollgate.yaml', env });
  };

  it('defaults: docs/decisions.md B3 agent bounds, no audit log, MCP off on /mcp with token auth and memory sessions', () => {
    const config = load('version: 1\n');
    expect(config.ai.agent).toEqual({ limits: DEFAULT_AGENT_LIMITS });
    expect(config.mcp).toEqual(DEFAULT_MCP_SETTINGS);
  });

  it('maps the sections, resolving audit_log against the file and the MCP token from MCP_TOKEN, else api.token', () => {
    const config = load(
      'version: 1\napi: { token: api-tok }\nagent: { max_loops: 3, max_observation_bytes: 2048, audit_log: logs/audit.jsonl }\n' +
        'mcp: { enabled: true, path: /tools/mcp/, allowed_origins: ["https://App.example.com"], session_ttl: 60, session_store: redis, redis_url: "redis://127.0.0.1:6379" }\n',
    );
    expect(config.ai.agent).toEqual({ limits: { ...DEFAULT_AGENT_LIMITS, maxLoops: 3, maxObservationBytes: 2048 }, auditLog: join(dir, 'logs', 'audit.jsonl') });
    expect(config.mcp).toEqual({
      enabled: true,
      path: '/tools/mcp',
      auth: 'token',
      token: 'api-tok',
      allowedOrigins: ['https://app.example.com'],
      maxBodyBytes: 1048576,
      sessionTtlMs: 60_000,
      sessionStore: { kind: 'redis', url: 'redis://127.0.0.1:6379', keyPrefix: 'tollgate:mcp:' },
    });
    expect(load('version: 1\napi: { token: api-tok }\n', { MCP_TOKEN: 'mcp-tok' }).mcp.token).toBe('mcp-tok');
  });

  it('maps agent.tool_protocol', () => {
    expect(load('version: 1\nagent: { tool_protocol: prompt }\n').ai.agent).toEqual({ limits: DEFAULT_AGENT_LIMITS, toolProtocol: 'prompt' });
    expect(problemsOf(() => load('version: 1\nagent: { tool_protocol: native }\n')).join('\n')).toContain('agent.tool_protocol');
  });

  it('refuses bad values naming the key', () => {
    expect(problemsOf(() => load('version: 1\nagent: { max_loops: 0 }\n')).join('\n')).toContain('agent.max_loops');
    expect(problemsOf(() => load('version: 1\nagent: { max_steps: 3 }\n')).join('\n')).toContain('max_steps');
    expect(problemsOf(() => load('version: 1\nagent: { max_context_bytes: 20000 }\n'))).toEqual([expect.stringContaining('agent.max_context_bytes: agent limit maxContextBytes (20000) must be at least')]);
    expect(problemsOf(() => load('version: 1\nmcp: { session_store: redis }\n'))).toEqual([expect.stringContaining('mcp.redis_url: is required for session_store redis')]);
    expect(problemsOf(() => load('version: 1\nmcp: { auth: jwt }\n'))).toEqual([expect.stringContaining('mcp.auth: jwt needs the AuthModule')]);
    expect(problemsOf(() => load('version: 1\nmcp: { allowed_origins: ["app.example.com"] }\n')).join('\n')).toContain('mcp.allowed_origins');
  });
});
