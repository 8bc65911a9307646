/**
 * Tools, tool choice, structured output and sampling settings in Ollama's words. Ollama has no tool_choice and
 * no switch for parallel calls: the defaults (`auto`, parallel allowed) are no-ops, `none` is sending no tools,
 * anything else is refused naming the parameter.
 */
import { InvalidRequestError } from '../../errors';
import type { GenerateRequest } from '../ai-provider.interface';

export interface OllamaTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export interface OllamaOptions {
  num_predict?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop?: string[];
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
}

export function toOllamaTools(request: GenerateRequest, provider: string): OllamaTool[] | undefined {
  const choice = request.toolChoice;
  if (choice !== undefined && choice !== 'auto' && choice !== 'none') {
    const what = typeof choice === 'string' ? `'${choice}'` : 'a named tool';
    throw new InvalidRequestError(`${provider}: tool_choice ${what} is not supported by Ollama (only auto or none)`, {
      param: 'tool_choice',
      provider,
    });
  }
  if (request.parallelToolCalls === false) {
    throw new InvalidRequestError(`${provider}: parallel_tool_calls false is not supported by Ollama`, { provider, param: 'parallel_tool_calls' });
  }
  if (!request.tools?.length || choice === 'none') return undefined;
  return request.tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      parameters: tool.parameters ?? { type: 'object', properties: {} },
    },
  }));
}

/** `format`: "json" for any JSON object, the schema itself for json_schema (Ollama 0.5+); text needs none. */
export function toOllamaFormat(request: GenerateRequest): 'json' | Record<string, unknown> | undefined {
  const format = request.responseFormat;
  if (format === undefined || format.type === 'text') return undefined;
  return format.type === 'json_object' ? 'json' : format.schema;
}

/** Sampling settings go in `options`, sent only when given. */
export function toOllamaOptions(request: GenerateRequest): OllamaOptions | undefined {
  const options: OllamaOptions = {};
  if (request.maxTokens !== undefined) options.num_predict = request.maxTokens;
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.topP !== undefined) options.top_p = request.topP;
  if (request.topK !== undefined) options.top_k = request.topK;
  if (request.stop !== undefined && request.stop.length > 0) options.stop = request.stop;
  if (request.seed !== undefined) options.seed = request.seed;
  if (request.frequencyPenalty !== undefined) options.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) options.presence_penalty = request.presencePenalty;
  return Object.keys(options).length > 0 ? options : undefined;
}
