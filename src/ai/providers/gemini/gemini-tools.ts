import { InvalidRequestError } from '../../errors';
import type { GenerateRequest } from '../ai-provider.interface';
import type { GeminiGenerateBody } from './gemini-wire';

/**
 * `tools` become one `functionDeclarations` tool. Schemas go in `parametersJsonSchema`, which takes JSON Schema
 * as given, rather than `parameters` (Google's OpenAPI subset), so no keyword is rewritten or lost on the way.
 * `strict` has no Gemini switch: the API applies the declared schema itself (guaranteed in ANY mode).
 * `tool_choice` maps to `toolConfig.functionCallingConfig`: auto AUTO, none NONE, required ANY, a named
 * tool ANY with `allowedFunctionNames`. Gemini cannot turn parallel calls off, so `parallel_tool_calls: false`
 * is refused.
 */
export function convertGeminiTools(request: GenerateRequest, provider: string): Pick<GeminiGenerateBody, 'tools' | 'toolConfig'> {
  if (request.parallelToolCalls === false) {
    throw new InvalidRequestError(`${provider}: parallel_tool_calls false is not supported by gemini (it cannot limit a turn to one call)`, {
      param: 'parallel_tool_calls',
      provider,
    });
  }
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  if (tools.length === 0) {
    // Without tools nothing can be called, which is what auto and none mean then.
    if (choice === undefined || choice === 'auto' || choice === 'none') return {};
    throw new InvalidRequestError(`${provider}: tool_choice requires a tool call but no tools were given`, { provider, param: 'tool_choice' });
  }
  const functionDeclarations = tools.map((tool) => ({
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    ...(tool.parameters !== undefined ? { parametersJsonSchema: tool.parameters } : {}),
  }));
  const body: Pick<GeminiGenerateBody, 'tools' | 'toolConfig'> = { tools: [{ functionDeclarations }] };
  if (choice === undefined) return body;
  if (choice === 'auto') body.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (choice === 'none') body.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (choice === 'required') body.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else {
    if (!tools.some((tool) => tool.name === choice.name)) {
      throw new InvalidRequestError(`${provider}: tool_choice names '${choice.name}', which is not among the tools`, { provider, param: 'tool_choice' });
    }
    body.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  }
  return body;
}
