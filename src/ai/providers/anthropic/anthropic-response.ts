import { isObject } from '../../../common/json-values';
import { InvalidResponseError } from '../../errors';
import type { GenerateResult, ToolCall } from '../ai-provider.interface';
import { mapAnthropicStopReason } from './anthropic-stop-reason';
import { toTokenUsage } from './anthropic-usage';

/**
 * Reads a Messages API response: text blocks are concatenated, `tool_use` blocks become tool calls (arguments
 * are the input object as JSON text), other block kinds (thinking) are not part of the answer. With
 * `jsonTool`, that forced tool's input is the answer's text.
 */
export function fromAnthropicMessage(body: unknown, provider: string, requestedModel: string, jsonTool?: string): GenerateResult {
  if (!isObject(body) || !Array.isArray(body.content)) {
    throw new InvalidResponseError(`${provider}: upstream response has no content blocks`, { provider });
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of body.content) {
    if (!isObject(block)) continue;
    if (block.type === 'text') {
      if (typeof block.text !== 'string') {
        throw new InvalidResponseError(`${provider}: upstream text block has no text`, { provider });
      }
      text += block.text;
    } else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string' || !isObject(block.input)) {
        throw new InvalidResponseError(`${provider}: upstream tool_use block lacks id, name or input`, { provider });
      }
      if (jsonTool !== undefined && block.name === jsonTool) text = JSON.stringify(block.input);
      else toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
    }
  }
  const usage = toTokenUsage(body.usage);
  return {
    text,
    model: typeof body.model === 'string' ? body.model : requestedModel,
    finishReason: mapAnthropicStopReason(body.stop_reason, jsonTool !== undefined),
    ...(usage ? { usage } : {}),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
}
