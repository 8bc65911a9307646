/**
 * The agent's protocol on providers with native tool calling (docs/search-agent-mcp.md): the allowed tools go
 * out as ToolDefinitions, the model's turn is its text or exactly one tool call, and each observation answers
 * its call as a `tool` message. The bounds and violations are those of the prompt protocol
 * (agent-action.parser.ts), so a run means the same whichever protocol carries it.
 */
import type { ChatMessage, ToolCall, ToolDefinition } from '../providers/ai-provider.interface';
import type { AgentTurn, ParseTurnOptions } from './agent-action.parser';
import { AgentProtocolError } from './agent-errors';
import { omittedTurnsMarker, type ToolDescription } from './agent-transcript';
import { utf8Length } from './utf8-truncate';

export const NATIVE_AGENT_SYSTEM_PROMPT = [
  'You are a careful assistant that completes the task the user gives.',
  'Call one of the provided tools when it helps, at most one tool call per turn; when you are done, answer in plain text without calling a tool.',
  'Tool results arrive as JSON observations; a failed call shows only an error category.',
].join('\n');

/** One finished tool turn: the call as the model made it (and any text beside it), then its observation. */
export interface NativeTranscriptTurn {
  call: ToolCall;
  text: string;
  observation: string;
}

export type NativeAgentTurn = Extract<AgentTurn, { kind: 'answer' }> | (Extract<AgentTurn, { kind: 'action' }> & { call: ToolCall; text: string });

export function agentToolDefinitions(tools: readonly ToolDescription[]): ToolDefinition[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
}

/**
 * Reads one model turn: no tool call is the answer; one allowlisted call with a JSON object of arguments
 * (empty arguments mean `{}`) is the action. Text beside a call is kept for the transcript, not answered.
 */
export function parseNativeTurn(answer: { response: string; toolCalls?: readonly ToolCall[] }, options: ParseTurnOptions): NativeAgentTurn {
  const calls = answer.toolCalls ?? [];
  const size = utf8Length(answer.response) + calls.reduce((sum, call) => sum + utf8Length(call.name) + utf8Length(call.arguments), 0);
  if (size > options.maxResponseBytes) {
    throw new AgentProtocolError('response_too_large', `the model's turn exceeds ${options.maxResponseBytes} bytes`);
  }
  if (calls.length === 0) return { kind: 'answer', text: answer.response.trim() };
  if (calls.length > 1) {
    throw new AgentProtocolError('multiple_actions', `the model asked for ${calls.length} tool calls in one turn; exactly one is allowed`);
  }
  const [call] = calls;
  if (!options.allowlist.has(call.name)) {
    throw new AgentProtocolError('unknown_tool', `the model asked for tool ${JSON.stringify(call.name.slice(0, 64))}, which is not allowed in this run`);
  }
  if (utf8Length(call.arguments) > options.maxActionBytes) {
    throw new AgentProtocolError('action_too_large', `the action exceeds ${options.maxActionBytes} bytes`);
  }
  return { kind: 'action', tool: call.name, args: parseArguments(call.arguments), call, text: answer.response };
}

function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AgentProtocolError('invalid_json', 'the tool call arguments are not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AgentProtocolError('invalid_action', 'the tool call arguments must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * The conversation for the next turn: the task, then each tool turn as an assistant call and its tool
 * result. Beyond `maxBytes` (task, call texts and observations counted) the oldest turns are dropped whole,
 * call and result together, and one marker line after the task says so, as the prompt protocol does.
 */
export function renderNativeMessages(task: string, turns: readonly NativeTranscriptTurn[], maxBytes: number): ChatMessage[] {
  const sizes = turns.map((turn) => utf8Length(turn.text) + utf8Length(turn.call.name) + utf8Length(turn.call.arguments) + utf8Length(turn.observation));
  const taskText = (dropped: number) => (dropped > 0 ? `${task}\n\n${omittedTurnsMarker(dropped)}` : task);
  let dropped = 0;
  let kept = sizes.reduce((sum, size) => sum + size, 0);
  while (dropped < turns.length && utf8Length(taskText(dropped)) + kept > maxBytes) {
    kept -= sizes[dropped];
    dropped += 1;
  }
  const messages: ChatMessage[] = [{ role: 'user', content: taskText(dropped) }];
  for (const turn of turns.slice(dropped)) {
    messages.push({ role: 'assistant', content: turn.text === '' ? null : turn.text, toolCalls: [turn.call] });
    messages.push({ role: 'tool', toolCallId: turn.call.id, content: turn.observation });
  }
  return messages;
}
