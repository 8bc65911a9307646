/**
 * What the model reads each turn: a system prompt stating the protocol and the allowed tools, and a
 * transcript of the task and the turns so far. When the transcript exceeds the context limit the oldest
 * turns are replaced, whole, by one marker line: the same history always compacts to the same text.
 */
import { utf8Length } from './utf8-truncate';

export interface TranscriptTurn {
  /** The model's action block as it was accepted (re-serialized, so it is canonical JSON). */
  action: string;
  /** The serialized observation. */
  observation: string;
}

export interface ToolDescription {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export function agentSystemPrompt(tools: readonly ToolDescription[]): string {
  const lines = [
    'You are a careful assistant that completes the task below.',
    'Each of your turns must be EITHER your final answer as plain text, OR exactly one tool request written as a single JSON object in a fenced json block:',
    '```json',
    '{"action": "<tool name>", "args": {<arguments matching the tool\'s schema>}}',
    '```',
    'Never request more than one tool per turn, never add other keys, and never mix an answer with a tool request.',
    'Tool results arrive as JSON observations; a failed call shows only an error category.',
  ];
  if (tools.length === 0) {
    lines.push('No tools are available for this task: answer directly.');
  } else {
    lines.push('Available tools:');
    for (const tool of tools) lines.push(`- ${tool.name}: ${tool.description} Arguments schema: ${JSON.stringify(tool.parameters)}`);
  }
  return lines.join('\n');
}

/** The line standing for turns compaction dropped (both protocols). */
export const omittedTurnsMarker = (count: number): string => `[${count} earlier tool ${count === 1 ? 'turn' : 'turns'} omitted to fit the context limit]`;

/** The prompt for the next turn, at most `maxBytes` when the task alone allows it (older turns go first). */
export function renderTranscript(task: string, turns: readonly TranscriptTurn[], maxBytes: number, closing: string): string {
  const head = `Task:\n${task}\n`;
  const rendered = turns.map((turn, index) => `\nTurn ${index + 1} action:\n${turn.action}\nObservation:\n${turn.observation}\n`);
  const tail = `\n${closing}`;
  let dropped = 0;
  const size = () => utf8Length(head) + (dropped > 0 ? utf8Length(`\n${omittedTurnsMarker(dropped)}\n`) : 0) + rendered.slice(dropped).reduce((sum, text) => sum + utf8Length(text), 0) + utf8Length(tail);
  while (dropped < rendered.length && size() > maxBytes) dropped += 1;
  return head + (dropped > 0 ? `\n${omittedTurnsMarker(dropped)}\n` : '') + rendered.slice(dropped).join('') + tail;
}
