/**
 * Request bodies of OpenAI's Responses API (`POST /openai/v1/responses`): one JSON Schema compiled once with
 * ajv, then the body as the domain's messages and generation options. Errors are the OpenAI surface's own
 * (OpenAiRequestError: 400 `invalid_request_error` naming the parameter), worded as OpenAI words them.
 */
import Ajv from 'ajv';
import type { ResponseFormat, ToolChoice, ToolDefinition } from '../../providers/ai-provider.interface';
import { OpenAiRequestError, requestError } from '../openai/openai-requests';

const NAME = { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' } as const;

/** Input items are checked for their fields in responses-input.ts, which names the item and the field. */
const INPUT_ITEM = { type: 'object', properties: { type: { type: 'string' } } } as const;

/**
 * Function tools have a domain counterpart, and so have the functions of a namespace tool (under qualified
 * names); the type of any other tool is refused by name in code.
 */
const TOOL = { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } as const;

const FUNCTION_TOOL = {
  type: 'object',
  required: ['type', 'name'],
  properties: {
    type: { const: 'function' },
    name: NAME,
    description: { type: ['string', 'null'] },
    parameters: { type: ['object', 'null'] },
    strict: { type: ['boolean', 'null'] },
  },
  additionalProperties: false,
} as const;

/** A group of function tools under one name (Codex CLI's sub-agent tools come so); its tools are checked one by one. */
const NAMESPACE_TOOL = {
  type: 'object',
  required: ['type', 'name', 'tools'],
  properties: {
    type: { const: 'namespace' },
    name: NAME,
    description: { type: ['string', 'null'] },
    tools: { type: 'array', minItems: 1, maxItems: 128, items: TOOL },
  },
  additionalProperties: false,
} as const;

const TEXT_FORMAT = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['text', 'json_object', 'json_schema'] },
    name: NAME,
    description: { type: 'string' },
    schema: { type: 'object' },
    strict: { type: ['boolean', 'null'] },
  },
  additionalProperties: false,
} as const;

/** What `include` may ask for; none of it exists on the way through the domain model, so each is accepted and answers nothing extra. */
const INCLUDABLE = [
  'reasoning.encrypted_content',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'code_interpreter_call.outputs',
] as const;

export const RESPONSES_SCHEMA = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 256 },
    input: { type: ['string', 'array'], maxItems: 2048, items: INPUT_ITEM },
    instructions: { type: ['string', 'null'] },
    tools: { type: 'array', maxItems: 128, items: TOOL },
    tool_choice: {
      oneOf: [
        { enum: ['auto', 'none', 'required'] },
        { type: 'object', required: ['type'], properties: { type: { type: 'string' }, name: { type: 'string' } } },
      ],
    },
    parallel_tool_calls: { type: ['boolean', 'null'] },
    text: { type: 'object', properties: { format: TEXT_FORMAT }, additionalProperties: false },
    max_output_tokens: { type: ['integer', 'null'], minimum: 16, maximum: 1_000_000 },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    metadata: { type: ['object', 'null'], maxProperties: 16, additionalProperties: { type: 'string', maxLength: 512 } },
    store: { type: ['boolean', 'null'] },
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: ['object', 'null'], properties: { include_obfuscation: { type: 'boolean' } }, additionalProperties: false },
    previous_response_id: { type: ['string', 'null'], minLength: 1 },
    reasoning: {
      type: ['object', 'null'],
      properties: {
        effort: { enum: ['minimal', 'low', 'medium', 'high', null] },
        summary: { enum: ['auto', 'concise', 'detailed', null] },
      },
      additionalProperties: false,
    },
    include: { type: ['array', 'null'], items: { enum: INCLUDABLE } },
    user: { type: 'string' },
    // Hints to OpenAI's own cache routing and abuse detection: accepted, with nothing to send elsewhere.
    prompt_cache_key: { type: ['string', 'null'], maxLength: 256 },
    safety_identifier: { type: ['string', 'null'], maxLength: 256 },
    // Codex CLI's per-turn tracing (installation, session and turn ids) on every request: accepted, sent nowhere.
    client_metadata: { type: ['object', 'null'], maxProperties: 32, additionalProperties: { type: 'string', maxLength: 8192 } },
    truncation: { enum: ['disabled', null] },
    service_tier: { enum: ['auto', 'default', null] },
    background: { enum: [false, null] },
  },
  additionalProperties: false,
} as const;

export type ResponsesInputItem = { type?: string } & Record<string, unknown>;

export interface ResponsesRequest {
  model: string;
  input: string | ResponsesInputItem[];
  instructions?: string | null;
  tools?: Array<{ type: string } & Record<string, unknown>>;
  tool_choice?: 'auto' | 'none' | 'required' | { type: string; name?: string };
  parallel_tool_calls?: boolean | null;
  text?: { format?: { type: 'text' | 'json_object' | 'json_schema'; name?: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  metadata?: Record<string, string> | null;
  store?: boolean | null;
  stream?: boolean | null;
  previous_response_id?: string | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  include?: string[] | null;
  user?: string;
}

const ajv = new Ajv({ allErrors: false, strict: true, strictTypes: false });
const validateResponses = ajv.compile<ResponsesRequest>(RESPONSES_SCHEMA);
const validateFunctionTool = ajv.compile(FUNCTION_TOOL);
const validateNamespaceTool = ajv.compile(NAMESPACE_TOOL);

export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (validateResponses(body)) return body;
  throw requestError(validateResponses.errors![0]);
}

/**
 * A namespace's function as the model sees it: no provider kind has namespaces, and every one takes tool names
 * of letters, digits, `_` and `-` up to 64 characters, so the two names are joined by `__`.
 */
export function qualifiedToolName(namespace: string, name: string): string {
  return `${namespace}__${name}`;
}

/** A function call's name, and its namespace when it has one, as the caller declared them. */
export interface CallName {
  name: string;
  namespace?: string;
}

/** From the name a model called to the name and namespace the caller's tools declared. */
export type CallNames = (called: string) => CallName;

/** OpenAI's web search tool under the names it has had; Tollgate runs its own search for it (responses-web-search.ts). */
const WEB_SEARCH_TOOL_TYPES = new Set(['web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11']);

/** The name of the function a web search tool becomes for a model that is not OpenAI's. */
export const WEB_SEARCH_FUNCTION = 'web_search';

/** What the model reads of the function: it searches, and the results come back as the function's output. */
const WEB_SEARCH_DEFINITION: ToolDefinition = {
  name: WEB_SEARCH_FUNCTION,
  description: 'Search the web. Returns the results (title, url, snippet) for the query; cite the urls you use.',
  parameters: { type: 'object', properties: { query: { type: 'string', description: 'The search query.' } }, required: ['query'], additionalProperties: false },
};

/** Where the request declares a web search tool, as its error names it (`tools[0].type`), and the type it gave. */
export interface WebSearchToolAt {
  param: string;
  type: string;
}

export function webSearchTool(tools: ResponsesRequest['tools']): WebSearchToolAt | undefined {
  const index = tools?.findIndex((tool) => WEB_SEARCH_TOOL_TYPES.has(tool.type)) ?? -1;
  return index < 0 ? undefined : { param: `tools[${index}].type`, type: tools![index].type };
}

/**
 * Function tools as the domain's definitions, the functions of a namespace tool as function tools with
 * qualified names ({@link qualifiedToolName}), and a web search tool as the `web_search` function Tollgate answers
 * itself (whether it may is the controller's to decide, by target and configuration); another tool type
 * (file_search, custom, ...) is refused by name.
 */
export function responsesTools(tools: ResponsesRequest['tools']): ToolDefinition[] | undefined {
  if (tools === undefined) return undefined;
  const definitions: ToolDefinition[] = [];
  const declaredAt = new Map<string, string>();
  const add = (definition: ToolDefinition, at: string) => {
    const earlier = declaredAt.get(definition.name);
    if (earlier !== undefined) {
      throw new OpenAiRequestError(`Invalid value for '${at}.name': the tool name '${definition.name}' is already declared at '${earlier}'.`, `${at}.name`, 'invalid_value');
    }
    declaredAt.set(definition.name, at);
    definitions.push(definition);
  };
  tools.forEach((tool, index) => {
    const at = `tools[${index}]`;
    if (tool.type === 'namespace') {
      namespaceFunctions(tool, index).forEach(({ definition, at: functionAt }) => add(definition, functionAt));
      return;
    }
    if (WEB_SEARCH_TOOL_TYPES.has(tool.type)) {
      add(WEB_SEARCH_DEFINITION, at);
      return;
    }
    if (tool.type !== 'function') throw unsupportedTool(tool.type, at);
    add(functionDefinition(tool, `/tools/${index}`), at);
  });
  return definitions;
}

/** Which called names are a namespace's functions; every other name is the caller's own. */
export function callNames(tools: ResponsesRequest['tools']): CallNames {
  const namespaced = new Map<string, CallName>();
  for (const tool of tools ?? []) {
    if (tool.type !== 'namespace') continue;
    const namespace = tool.name as string;
    for (const { name } of tool.tools as Array<{ name: string }>) namespaced.set(qualifiedToolName(namespace, name), { name, namespace });
  }
  return (called) => namespaced.get(called) ?? { name: called };
}

function unsupportedTool(type: unknown, at: string): OpenAiRequestError {
  return new OpenAiRequestError(`Unsupported tool type '${String(type)}' in '${at}.type': this gateway routes function tools, namespaces of them and web_search only.`, `${at}.type`, 'unsupported_value');
}

/** `path` is the tool's JSON pointer, so an error names the field inside it. */
function functionDefinition(tool: unknown, path: string): ToolDefinition {
  if (!validateFunctionTool(tool)) {
    const error = validateFunctionTool.errors![0];
    throw requestError({ ...error, instancePath: `${path}${error.instancePath}` });
  }
  const { name, description, parameters, strict } = tool as { name: string; description?: string | null; parameters?: Record<string, unknown> | null; strict?: boolean | null };
  return {
    name,
    ...(typeof description === 'string' ? { description } : {}),
    ...(parameters ? { parameters } : {}),
    ...(typeof strict === 'boolean' ? { strict } : {}),
  };
}

/** The namespace's description, which the model would otherwise lose, leads each function's own. */
function namespaceFunctions(tool: unknown, index: number): Array<{ definition: ToolDefinition; at: string }> {
  if (!validateNamespaceTool(tool)) {
    const error = validateNamespaceTool.errors![0];
    throw requestError({ ...error, instancePath: `/tools/${index}${error.instancePath}` });
  }
  const { name: namespace, description, tools } = tool as { name: string; description?: string | null; tools: Array<{ type: string }> };
  return tools.map((inner, innerIndex) => {
    const at = `tools[${index}].tools[${innerIndex}]`;
    if (inner.type !== 'function') throw unsupportedTool(inner.type, at);
    const definition = functionDefinition(inner, `/tools/${index}/tools/${innerIndex}`);
    const name = qualifiedToolName(namespace, definition.name);
    if (name.length > 64) {
      throw new OpenAiRequestError(
        `Invalid value for '${at}.name': '${namespace}' and '${definition.name}' make the tool name '${name}', longer than the 64 characters a model takes.`,
        `${at}.name`,
        'invalid_value',
      );
    }
    const described = [description, definition.description].filter((text) => typeof text === 'string' && text !== '').join('\n\n');
    return { definition: { ...definition, name, ...(described !== '' ? { description: described } : {}) }, at };
  });
}

/** A choice of the web search tool forces the `web_search` function it becomes (for the first model turn only, responses-web-search.ts). */
export function responsesToolChoice(choice: ResponsesRequest['tool_choice']): ToolChoice | undefined {
  if (choice === undefined || typeof choice === 'string') return choice;
  if (WEB_SEARCH_TOOL_TYPES.has(choice.type)) return { name: WEB_SEARCH_FUNCTION };
  if (choice.type !== 'function') {
    throw new OpenAiRequestError(`Unsupported value for 'tool_choice.type': '${choice.type}'; this gateway routes function tools and web_search only.`, 'tool_choice.type', 'unsupported_value');
  }
  if (typeof choice.name !== 'string' || choice.name === '') {
    throw new OpenAiRequestError("Missing required parameter: 'tool_choice.name'.", 'tool_choice.name', 'missing_required_parameter');
  }
  return { name: choice.name };
}

/** `text.format` as the domain's response format; a json_schema format needs its name and schema. */
export function responsesFormat(text: ResponsesRequest['text']): ResponseFormat | undefined {
  const format = text?.format;
  if (format === undefined) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  if (format.name === undefined) throw new OpenAiRequestError("Missing required parameter: 'text.format.name'.", 'text.format.name', 'missing_required_parameter');
  if (format.schema === undefined) throw new OpenAiRequestError("Missing required parameter: 'text.format.schema'.", 'text.format.schema', 'missing_required_parameter');
  return {
    type: 'json_schema',
    name: format.name,
    schema: format.schema,
    ...(format.description !== undefined ? { description: format.description } : {}),
    ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
  };
}
