/** Tools, tool choice and response format in the OpenAI chat-completions shape. */
import type { ResponseFormat, ToolChoice, ToolDefinition } from '../ai-provider.interface';

export function toOpenAiTools(tools: readonly ToolDefinition[]): Record<string, unknown>[] {
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      // OpenAI documents an omitted `parameters` as an empty parameter list; sending the schema keeps that explicit.
      parameters: tool.parameters ?? { type: 'object', properties: {} },
      ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
    },
  }));
}

export function toOpenAiToolChoice(choice: ToolChoice): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

export function toOpenAiResponseFormat(format: ResponseFormat): Record<string, unknown> {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.description !== undefined ? { description: format.description } : {}),
      ...(format.strict !== undefined ? { strict: format.strict } : {}),
    },
  };
}
