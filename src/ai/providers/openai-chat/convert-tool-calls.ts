/** Tool calls read from OpenAI answers: whole ones in a completion, indexed pieces in a stream. */
import { randomUUID } from 'node:crypto';
import type { ToolCall, ToolCallDelta } from '../ai-provider.interface';

/** For servers that send a call without an id (some OpenAI-compatible ones); tool results must refer to one. */
export function generatedToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/** Undefined when the list is absent; a malformed entry is reported by the caller as an invalid answer. */
export function parseToolCalls(value: unknown): ToolCall[] | 'invalid' | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return 'invalid';
  const calls: ToolCall[] = [];
  for (const item of value) {
    const fn = (item as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof fn?.name !== 'string') return 'invalid';
    // Some servers send an empty string or an object for "no arguments"; the domain carries JSON text.
    const args = typeof fn.arguments === 'string' ? fn.arguments : fn.arguments === undefined ? '' : JSON.stringify(fn.arguments);
    calls.push({ id: typeof id === 'string' && id !== '' ? id : generatedToolCallId(), name: fn.name, arguments: args });
  }
  return calls.length > 0 ? calls : undefined;
}

/**
 * `delta.tool_calls` pieces as ToolCallDeltas; entries without an index (some OpenAI-compatible servers send
 * every call whole) take their position in the list.
 */
export function parseToolCallDeltas(value: unknown): ToolCallDelta[] | 'invalid' | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return 'invalid';
  const deltas: ToolCallDelta[] = [];
  value.forEach((item, position) => {
    if (!item || typeof item !== 'object') return;
    const entry = item as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const delta: ToolCallDelta = { index: typeof entry.index === 'number' ? entry.index : position };
    if (typeof entry.id === 'string' && entry.id !== '') delta.id = entry.id;
    if (typeof entry.function?.name === 'string' && entry.function.name !== '') delta.name = entry.function.name;
    const args = entry.function?.arguments;
    if (typeof args === 'string' && args !== '') delta.arguments = args;
    else if (args !== undefined && args !== null && typeof args === 'object') delta.arguments = JSON.stringify(args);
    deltas.push(delta);
  });
  return deltas.length > 0 ? deltas : undefined;
}
