import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.loader';
import { startupSummary } from './startup-summary';

const ORIGIN = 'http://127.0.0.1:3000';

describe('startupSummary: the surfaces and MCP', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-summary-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function summary(yaml: string, env: NodeJS.ProcessEnv = {}) {
    writeFileSync(join(dir, 'tollgate.yaml'), `version: 1\n${yaml}`);
    return startupSummary(loadConfig({ cwd: dir, env, configPath: 'tollgate.yaml' }), ORIGIN, []);
  }

  const mcpLine = (yaml: string, env: NodeJS.ProcessEnv = {}) => summary(yaml, env).find((line) => line.text.startsWith('MCP:'));

  it('names every dialect with the base URL its clients take, under the base path', () => {
    const surfaces = summary('server: { base_path: /gw }\n').find((line) => line.text.startsWith('AI surfaces:'));
    expect(surfaces?.text).toBe(
      `AI surfaces: ${ORIGIN}/gw/v1 (Tollgate's own), ${ORIGIN}/gw/openai/v1 (OpenAI chat completions and responses; OPENAI_BASE_URL), ` +
        `${ORIGIN}/gw/anthropic/v1 (Anthropic Messages; ANTHROPIC_BASE_URL=${ORIGIN}/gw/anthropic), ${ORIGIN}/gw/gemini/v1beta (Gemini; GOOGLE_GEMINI_BASE_URL=${ORIGIN}/gw/gemini)`,
    );
  });

  it('says how MCP over HTTP is reached and with which credential, warning where it takes none or has no token', () => {
    expect(mcpLine('')).toEqual({ level: 'log', text: 'MCP: off over HTTP (mcp.enabled: false); tollgate mcp --stdio serves it on stdio' });
    expect(mcpLine('mcp: { enabled: true, path: /tools }\napi: { token: "api-token-of-the-summary" }\n')).toEqual({
      level: 'log',
      text: `MCP: ${ORIGIN}/tools (Streamable HTTP): Bearer token (mcp.token, else api.token) or an API key; a token is set`,
    });
    expect(mcpLine('mcp: { enabled: true }\n')).toEqual({
      level: 'warn',
      text: `MCP: ${ORIGIN}/mcp (Streamable HTTP): no token is set (mcp.token, else api.token): a call without an API key answers 401`,
    });
    expect(mcpLine('mcp: { enabled: true, auth: none }\n')).toMatchObject({ level: 'warn', text: `MCP: ${ORIGIN}/mcp (Streamable HTTP) answers anyone without a credential (mcp.auth: none)` });
    expect(mcpLine('mcp: { enabled: true, auth: jwt }\n', { JWT_SECRET: 'k'.repeat(40) })).toMatchObject({ level: 'log', text: `MCP: ${ORIGIN}/mcp (Streamable HTTP): the AuthModule's JWT (mcp.auth: jwt)` });
  });

  it('never shows the token it reports as set', () => {
    const texts = summary('api: { token: "api-token-SECRET-of-the-summary" }\nmcp: { enabled: true }\n').map((line) => line.text).join('\n');
    expect(texts).toContain('a token is set');
    expect(texts).not.toContain('api-token-SECRET-of-the-summary');
  });
});
