/**
 * The MCP face of the gateway, shared by Streamable HTTP and stdio: tools generate, embed, search,
 * providers, health and agent (JSON Schemas for their inputs, checked with ajv), resources
 * tollgate://providers and tollgate://health. Every call goes to the same services as the REST API.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { AgentService } from '../agent/agent.service';
import type { AgentRunContext } from '../agent/agent-tool.interface';
import type { AiClient } from '../client/ai-client';
import { TollgateError } from '../errors';
import { traceOperation } from '../../common/traced-operation';
import { snakeCaseKeys } from '../http/api-response';
import { imagePart, toDomainResponseFormat } from '../http/v1-messages';
import type { SearchService } from '../tools/search.service';

export interface McpServices {
  client: AiClient;
  search: SearchService;
  agent: AgentService;
  /** Reported as serverInfo.version. */
  version: string;
}

const NAME = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' };
const TEXT = { type: 'string', minLength: 1 };

interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[]; additionalProperties: false };
  run(args: Record<string, unknown>, context: AgentRunContext, signal: AbortSignal): Promise<unknown>;
}

function toolDefinitions(services: McpServices): ToolDefinition[] {
  const { client, search, agent } = services;
  return [
    {
      name: 'generate',
      description:
        'Generate text for a prompt with a registered AI provider (with retries and fallback); optionally JSON output ' +
        '(response_format, as on /v1/generate) and images the model reads (http(s) or data:image/...;base64, URLs).',
      inputSchema: {
        type: 'object',
        properties: {
          prompt: TEXT,
          provider: NAME,
          model: { type: 'string', minLength: 1, maxLength: 256 },
          max_tokens: { type: 'integer', minimum: 1, maximum: 1_000_000 },
          temperature: { type: 'number', minimum: 0, maximum: 2 },
          response_format: {
            type: 'object',
            properties: {
              type: { enum: ['text', 'json_object', 'json_schema'] },
              json_schema: {
                type: 'object',
                properties: { name: NAME, schema: { type: 'object' }, description: { type: 'string' }, strict: { type: 'boolean' } },
                required: ['name', 'schema'],
                additionalProperties: false,
              },
            },
            required: ['type'],
            additionalProperties: false,
          },
          images: { type: 'array', minItems: 1, maxItems: 16, items: { type: 'string', pattern: '^(https?://|data:image/)' } },
        },
        required: ['prompt'],
        additionalProperties: false,
      },
      run: (args, _context, signal) => {
        const options = {
          provider: args.provider as string | undefined,
          model: args.model as string | undefined,
          maxTokens: args.max_tokens as number | undefined,
          temperature: args.temperature as number | undefined,
          ...(args.response_format !== undefined ? { responseFormat: toDomainResponseFormat(args.response_format) } : {}),
          signal,
        };
        const images = args.images as string[] | undefined;
        if (images === undefined) return client.generateResponse(args.prompt as string, [], options);
        // With images the prompt goes as one user message, as on /v1/generate with messages (no templates).
        const content = [{ type: 'text' as const, text: args.prompt as string }, ...images.map((url, index) => imagePart(url, `images[${index}]`))];
        return client.generateMessages([{ role: 'user', content }], options);
      },
    },
    {
      name: 'embed',
      description: 'Embedding vector of one text.',
      inputSchema: {
        type: 'object',
        properties: { input: TEXT, provider: NAME, model: { type: 'string', minLength: 1, maxLength: 256 } },
        required: ['input'],
        additionalProperties: false,
      },
      run: (args, _context, signal) =>
        client.generateEmbedding(args.input as string, { provider: args.provider as string | undefined, model: args.model as string | undefined, signal }),
    },
    {
      name: 'search',
      description: 'Normalized web search results from a configured search tool (no AI call).',
      inputSchema: {
        type: 'object',
        properties: { query: TEXT, tool: NAME, limit: { type: 'integer', minimum: 1, maximum: 100 } },
        required: ['query'],
        additionalProperties: false,
      },
      run: (args, _context, signal) =>
        search.search(args.query as string, { tool: args.tool as string | undefined, limit: args.limit as number | undefined, signal }),
    },
    {
      name: 'providers',
      description: 'Registered AI providers (sanitized settings) and the default provider.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      run: async () => ({ defaultProvider: client.defaultProvider, providers: client.describeProviders() }),
    },
    {
      name: 'health',
      description: 'Health of one provider, or of every provider.',
      inputSchema: { type: 'object', properties: { provider: NAME }, additionalProperties: false },
      run: async (args) => healthReport(client, args.provider as string | undefined),
    },
    {
      name: 'agent',
      description: 'Run a task through the bounded tool-calling agent with an allowlist of tools (an empty list: answer directly).',
      inputSchema: {
        type: 'object',
        properties: {
          prompt: TEXT,
          tools: { type: 'array', items: NAME, maxItems: 64 },
          provider: NAME,
          max_loops: { type: 'integer', minimum: 1, maximum: 50 },
        },
        required: ['prompt', 'tools'],
        additionalProperties: false,
      },
      run: (args, context, signal) =>
        agent.run(args.prompt as string, {
          tools: args.tools as string[],
          provider: args.provider as string | undefined,
          maxLoops: args.max_loops as number | undefined,
          context,
          signal,
        }),
    },
  ];
}

async function healthReport(client: AiClient, provider?: string): Promise<Record<string, unknown>> {
  const results = provider !== undefined ? [await client.healthCheck(provider)] : await client.healthCheckAll();
  const healthy = results.filter((r) => r.status === 'healthy').length;
  const status = healthy === results.length && healthy > 0 ? 'healthy' : healthy > 0 ? 'degraded' : 'unhealthy';
  return { status, providers: results };
}

const RESOURCES = [
  { uri: 'tollgate://providers', name: 'providers', description: 'Registered AI providers and the default one.', mimeType: 'application/json' },
  { uri: 'tollgate://health', name: 'health', description: 'Health of every registered provider.', mimeType: 'application/json' },
];

/**
 * One MCP server over the services. `contextFor` gives the run context of each call (the HTTP session's
 * principal and the request id, or the stdio user); it is asked per call so calls never share one.
 */
export function createMcpServer(services: McpServices, contextFor: () => AgentRunContext): Server {
  const server = new Server({ name: 'tollgate', version: services.version }, { capabilities: { tools: {}, resources: {} } });
  const ajv = new Ajv({ allErrors: false, strict: false });
  const tools = new Map<string, { definition: ToolDefinition; validate: ValidateFunction }>(
    toolDefinitions(services).map((definition) => [definition.name, { definition, validate: ajv.compile(definition.inputSchema) }]),
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map(({ definition }) => ({ name: definition.name, description: definition.description, inputSchema: definition.inputSchema })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool '${request.params.name.slice(0, 64)}'`);
    const args = request.params.arguments ?? {};
    if (!tool.validate(args)) {
      const first = tool.validate.errors?.[0];
      const where = first?.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : 'arguments';
      return errorResult('invalid_request', `${where} ${first?.message ?? 'is invalid'}`);
    }
    try {
      const result = await traceOperation({ name: 'execute_tool', target: tool.definition.name, attributes: { 'gen_ai.tool.type': 'function', 'tollgate.tool.surface': 'mcp' } }, () =>
        tool.definition.run(args, contextFor(), extra.signal),
      );
      return { content: [{ type: 'text', text: JSON.stringify(snakeCaseKeys(result)) }] };
    } catch (error) {
      if (error instanceof TollgateError && error.type !== 'internal_error') return errorResult(error.type, error.message);
      return errorResult('internal_error', 'The call failed unexpectedly.');
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    let value: unknown;
    if (uri === 'tollgate://providers') value = { defaultProvider: services.client.defaultProvider, providers: services.client.describeProviders() };
    else if (uri === 'tollgate://health') value = await healthReport(services.client);
    else throw new McpError(ErrorCode.InvalidParams, `unknown resource '${uri.slice(0, 128)}'`);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(snakeCaseKeys(value)) }] };
  });

  return server;
}

/** A failed tool call as MCP reports it: a result the model can read, with Tollgate's own message only. */
function errorResult(type: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { type, message } }) }] };
}
