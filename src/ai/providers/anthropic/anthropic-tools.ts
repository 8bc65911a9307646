/**
 * Tools, tool choice and JSON output for the Messages API. JSON output uses a forced tool whose input is the
 * answer: it works on every Claude 3+ model with the pinned API version, while native structured outputs
 * need a beta header and only some models accept them.
 */
import { InvalidRequestError } from '../../errors';
import type { GenerateRequest, ResponseFormat, ToolChoice, ToolDefinition } from '../ai-provider.interface';

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** The forced tool's name for json_object (json_schema uses the schema's own name). */
export const JSON_OBJECT_TOOL = 'json_object';

export interface AnthropicToolFields {
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
}

function toAnthropicTool(tool: ToolDefinition): AnthropicTool {
  return {
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    // The API requires an object schema; a tool without parameters takes an empty object.
    input_schema: tool.parameters ?? { type: 'object', properties: {} },
  };
}

function toAnthropicToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): AnthropicToolChoice | undefined {
  if (choice === 'none') return { type: 'none' };
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false ? { type: 'auto', ...disable } : undefined;
  if (choice === 'auto') return { type: 'auto', ...disable };
  if (choice === 'required') return { type: 'any', ...disable };
  return { type: 'tool', name: choice.name, ...disable };
}

/** The name of the forced tool that carries a JSON answer, or undefined for text answers. */
export function jsonOutputTool(format: ResponseFormat | undefined): string | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  return format.type === 'json_object' ? JSON_OBJECT_TOOL : format.name;
}

function jsonTool(format: Exclude<ResponseFormat, { type: 'text' }>): AnthropicTool {
  if (format.type === 'json_object') {
    return { name: JSON_OBJECT_TOOL, description: 'Answer with a JSON object.', input_schema: { type: 'object' } };
  }
  return {
    name: format.name,
    description: format.description ?? 'Answer with JSON matching this schema.',
    input_schema: format.schema,
  };
}

export function toAnthropicToolFields(request: GenerateRequest, provider: string): AnthropicToolFields {
  const format = request.responseFormat;
  if (format !== undefined && format.type !== 'text') {
    // The JSON answer is itself a forced tool call, so it cannot share the request with the caller's tools.
    if (request.tools?.length || request.toolChoice !== undefined) {
      throw new InvalidRequestError(`${provider}: response_format ${format.type} cannot be combined with tools or tool_choice`, { provider, param: 'response_format' });
    }
    const tool = jsonTool(format);
    return { tools: [tool], tool_choice: { type: 'tool', name: tool.name } };
  }
  const tools = request.tools?.map(toAnthropicTool);
  const choice = toAnthropicToolChoice(request.toolChoice, request.parallelToolCalls);
  if (choice !== undefined && choice.type !== 'none' && !tools?.length) {
    throw new InvalidRequestError(`${provider}: tool_choice or parallel_tool_calls needs tools`, { provider, param: 'tool_choice' });
  }
  return {
    ...(tools?.length ? { tools } : {}),
    ...(choice !== undefined ? { tool_choice: choice } : {}),
  };
}
