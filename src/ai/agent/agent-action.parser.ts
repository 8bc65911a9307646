/**
 * The agent's action protocol (docs/search-agent-mcp.md, docs/decisions.md B7): a model turn either answers in
 * plain text, or asks for exactly one allowlisted tool as one JSON object `{"action": name, "args": {...}}`,
 * in a fenced json block (or as the whole turn). Anything else is a typed AgentProtocolError.
 */
import { AgentProtocolError } from './agent-errors';
import { utf8Length } from './utf8-truncate';

export type AgentTurn =
  | { kind: 'answer'; text: string }
  | { kind: 'action'; tool: string; args: Record<string, unknown> };

export interface ParseTurnOptions {
  allowlist: ReadonlySet<string>;
  maxActionBytes: number;
  maxResponseBytes: number;
}

const FENCE = /```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n([\s\S]*?)```/g;
const BARE_ACTION = /^\{\s*"action"\s*:/;
const ACTION_KEYS = new Set(['action', 'args']);

export function parseAgentTurn(text: string, options: ParseTurnOptions): AgentTurn {
  if (utf8Length(text) > options.maxResponseBytes) {
    throw new AgentProtocolError('response_too_large', `the model's turn exceeds ${options.maxResponseBytes} bytes`);
  }
  const blocks = [...text.matchAll(FENCE)].filter(([, language, body]) => isActionBlock(language, body));
  const trimmed = text.trim();
  if (blocks.length > 1) {
    throw new AgentProtocolError('multiple_actions', `the model asked for ${blocks.length} actions in one turn; exactly one is allowed`);
  }
  const source = blocks.length === 1 ? blocks[0][2] : BARE_ACTION.test(trimmed) ? trimmed : undefined;
  if (source === undefined) return { kind: 'answer', text: trimmed };
  return parseAction(source, options);
}

/** A `json` fence, or an unlabelled fence whose body looks like an action object. */
function isActionBlock(language: string, body: string): boolean {
  const label = language.toLowerCase();
  return label === 'json' || (label === '' && BARE_ACTION.test(body.trim()));
}

function parseAction(source: string, options: ParseTurnOptions): AgentTurn {
  if (utf8Length(source) > options.maxActionBytes) {
    throw new AgentProtocolError('action_too_large', `the action exceeds ${options.maxActionBytes} bytes`);
  }
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    throw new AgentProtocolError('invalid_json', 'the action is not valid JSON');
  }
  if (Array.isArray(value)) {
    throw new AgentProtocolError('multiple_actions', 'the action is a JSON array; exactly one action object is allowed');
  }
  if (value === null || typeof value !== 'object') {
    throw new AgentProtocolError('invalid_action', 'the action must be a JSON object with "action" and "args"');
  }
  const record = value as Record<string, unknown>;
  const extra = Object.keys(record).filter((key) => !ACTION_KEYS.has(key));
  if (extra.length > 0) {
    throw new AgentProtocolError('unknown_keys', `the action has keys other than "action" and "args": ${extra.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}`);
  }
  const { action, args = {} } = record;
  if (typeof action !== 'string' || action === '') {
    throw new AgentProtocolError('invalid_action', '"action" must be a non-empty string naming a tool');
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw new AgentProtocolError('invalid_action', '"args" must be a JSON object');
  }
  if (!options.allowlist.has(action)) {
    throw new AgentProtocolError('unknown_tool', `the model asked for tool ${JSON.stringify(action.slice(0, 64))}, which is not allowed in this run`);
  }
  return { kind: 'action', tool: action, args: args as Record<string, unknown> };
}
