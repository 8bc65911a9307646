import { parseAgentTurn } from './agent-action.parser';
import { AgentProtocolError } from './agent-errors';

const options = { allowlist: new Set(['web_search', 'lookup']), maxActionBytes: 200, maxResponseBytes: 1000 };

function violation(text: string, opts = options): string | undefined {
  try {
    parseAgentTurn(text, opts);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentProtocolError);
    return (error as AgentProtocolError).violation;
  }
  return undefined;
}

describe('parseAgentTurn', () => {
  it('reads plain text as the answer', () => {
    expect(parseAgentTurn('  Paris is the capital.\n', options)).toEqual({ kind: 'answer', text: 'Paris is the capital.' });
  });

  it('reads one fenced json action', () => {
    const text = 'Let me look.\n```json\n{"action": "web_search", "args": {"query": "capital of France"}}\n```';
    expect(parseAgentTurn(text, options)).toEqual({ kind: 'action', tool: 'web_search', args: { query: 'capital of France' } });
  });

  it('reads a bare action object and defaults args to {}', () => {
    expect(parseAgentTurn('{"action":"lookup"}', options)).toEqual({ kind: 'action', tool: 'lookup', args: {} });
  });

  it('leaves fenced code that is not an action to the answer', () => {
    const text = 'Use this:\n```ts\nconst a = 1;\n```';
    expect(parseAgentTurn(text, options)).toEqual({ kind: 'answer', text });
  });

  it('refuses two actions in one turn', () => {
    const one = '```json\n{"action":"lookup","args":{}}\n```';
    expect(violation(`${one}\n${one}`)).toBe('multiple_actions');
    expect(violation('```json\n[{"action":"lookup"},{"action":"lookup"}]\n```')).toBe('multiple_actions');
  });

  it('refuses invalid JSON, unknown keys and wrong types', () => {
    expect(violation('```json\n{"action": "lookup", "args": {\n```')).toBe('invalid_json');
    expect(violation('```json\n{"action":"lookup","args":{},"thought":"x"}\n```')).toBe('unknown_keys');
    expect(violation('```json\n{"action":7,"args":{}}\n```')).toBe('invalid_action');
    expect(violation('```json\n{"action":"lookup","args":[1]}\n```')).toBe('invalid_action');
    expect(violation('```json\n"lookup"\n```')).toBe('invalid_action');
  });

  it('refuses a tool outside the allowlist', () => {
    expect(violation('```json\n{"action":"delete_everything","args":{}}\n```')).toBe('unknown_tool');
  });

  it('refuses an action over the byte limit before parsing it', () => {
    const big = `{"action":"lookup","args":{"q":"${'€'.repeat(70)}"}}`;
    expect(violation('```json\n' + big + '\n```')).toBe('action_too_large');
  });

  it('refuses a turn over the response limit', () => {
    expect(violation('x'.repeat(1001))).toBe('response_too_large');
  });
});
