/**
 * The OpenAPI 3 document against Fastify's own route table: every route the application registered (every
 * controller mounted: AuthModule, MCP, metrics) is in /docs-json with its method, and nothing else is;
 * under a base path too. Request bodies carry the DTOs' class-validator constraints as JSON Schema.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestApps } from './support/test-apps';

/** Routes outside the API document: the API docs themselves and the usage page (HTML and its script). */
const UI_ROUTES = new Set(['/docs', '/docs/swagger-ui-init.js', '/docs/:asset', '/docs-json', '/docs-yaml', '/usage', '/usage/usage.js']);
let apps: TestApps;

beforeAll(() => {
  apps = new TestApps('tollgate-openapi-', { JWT_SECRET: 'd'.repeat(48), API_TOKEN: 'docs-token', MCP_TOKEN: 'docs-mcp' });
});

afterAll(() => apps.close());

interface Built {
  app: NestFastifyApplication;
  /** `METHOD path` of every route Fastify registered once the application started (HEAD twins left out). */
  routes: string[];
}

async function build(yaml: string): Promise<Built> {
  const { app } = await apps.create(yaml);
  const routes: string[] = [];
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRoute', (route: { method: string | string[]; url: string }) => {
    // A trailing wildcard is documented as the path parameter {path}, Nest's OpenAPI convention.
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push(`${method} ${route.url.replace(/\/\*$/, '/:path')}`);
  });
  await app.init();
  await fastify.ready();
  return { app, routes };
}

/** `METHOD path` of every operation in the document, paths in Fastify's `:param` spelling. */
function documented(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  const operations: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of Object.keys(item)) operations.push(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`);
  }
  return operations;
}

const FULL_YAML = 'version: 1\nauth: { rbac_enabled: false }\nmcp: { enabled: true }\n';

describe('OpenAPI document', () => {
  it('lists exactly the routes Fastify registered', async () => {
    const { app, routes } = await build(FULL_YAML);
    const response = await app.inject({ method: 'GET', url: '/docs-json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toMatch(/^3\./);
    expect(document.info).toMatchObject({ title: 'Tollgate', version: expect.any(String) });

    const registered = routes.filter((route) => !UI_ROUTES.has(route.split(' ')[1])).sort();
    // The controllers of every module the configuration mounts are there.
    expect(registered).toEqual(expect.arrayContaining(['GET /healthz', 'GET /metrics', 'GET /auth/context', 'POST /mcp', 'POST /v1/generate', 'GET /v1/version']));
    expect(documented(document).sort()).toEqual(registered);
    // The routes with their own credential say which.
    expect(document.paths['/auth/context'].get.security).toEqual([{ jwt: [] }]);
    expect(document.paths['/mcp'].post.security).toEqual(expect.arrayContaining([{ mcp_token: [] }, { jwt: [] }]));
  });

  it('follows base_path', async () => {
    const { app, routes } = await build(`${FULL_YAML}server: { base_path: /gateway }\n`);
    const document = (await app.inject({ method: 'GET', url: '/gateway/docs-json' })).json();
    const registered = routes.filter((route) => !UI_ROUTES.has(route.split(' ')[1].replace(/^\/gateway/, ''))).sort();
    expect(registered).toContain('POST /gateway/v1/generate');
    expect(documented(document).sort()).toEqual(registered);
    expect((await app.inject({ method: 'GET', url: '/gateway/docs' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/docs-json' })).statusCode).toBe(404);
  });

  it('describes request bodies with their constraints, the bearer scheme and the public operations', async () => {
    const { app } = await build('version: 1\n');
    const document = (await app.inject({ method: 'GET', url: '/docs-json' })).json();
    // Both credentials /v1 and /openai/v1 can take (api.auth decides which): the opaque API token and the JWT.
    expect(document.components.securitySchemes.api_token).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque token' });
    expect(document.components.securitySchemes.api_token.description).toContain('API_TOKEN');
    expect(document.components.securitySchemes.jwt).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(document.security).toEqual([{ api_token: [] }, { jwt: [] }]);
    // The probes take no credential; /metrics takes none unless metrics.token is set.
    expect(document.paths['/healthz'].get.security).toEqual([]);
    expect(document.paths['/readyz'].get.security).toEqual([]);
    expect(document.paths['/metrics'].get.security).toEqual([{}, { metrics_token: [] }]);
    expect(document.paths['/v1/generate'].post.security).toBeUndefined();
    const body = document.paths['/v1/generate'].post.requestBody.content['application/json'].schema;
    const schema = document.components.schemas[body.$ref.split('/').pop()];
    // prompt or messages: the controller requires one of them, so neither is required in the schema.
    expect(schema.required).toBeUndefined();
    expect(schema.properties.messages).toMatchObject({ type: 'array', minItems: 1 });
    expect(schema.properties.prompt).toMatchObject({ type: 'string', minLength: 1 });
    expect(schema.properties.max_tokens).toMatchObject({ type: 'integer', minimum: 1 });
    // The chat fields of /v1/generate: message forms (parts, tool calls, tool results with is_error), tools,
    // tool choice, response format, seed, penalties, and the fallback switch with its alias.
    const messageForms = schema.properties.messages.items.oneOf;
    expect(messageForms.map((form: { properties: { role: { enum: string[] } } }) => form.properties.role.enum[0])).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(messageForms[1].properties.content.oneOf[1].items.oneOf.map((part: { properties: { type: { enum: string[] } } }) => part.properties.type.enum[0])).toEqual([
      'text',
      'image_url',
    ]);
    expect(messageForms[2].properties.tool_calls.items.required).toEqual(['id', 'function']);
    expect(messageForms[3].properties.is_error).toMatchObject({ type: 'boolean' });
    expect(schema.properties.tools).toMatchObject({ type: 'array', maxItems: 128, items: { required: ['type', 'function'] } });
    expect(schema.properties.tool_choice.oneOf[0].enum).toEqual(['auto', 'none', 'required']);
    expect(schema.properties.response_format.oneOf[1].properties.json_schema.required).toEqual(['name', 'schema']);
    expect(schema.properties.parallel_tool_calls).toMatchObject({ type: 'boolean' });
    expect(schema.properties.seed).toMatchObject({ type: 'integer' });
    for (const penalty of ['frequency_penalty', 'presence_penalty']) expect(schema.properties[penalty]).toMatchObject({ type: 'number', minimum: -2, maximum: 2 });
    expect(schema.properties.enable_fallback).toMatchObject({ type: 'boolean' });
    expect(schema.properties.fallback.description).toContain('Alias of enable_fallback');
    // The generate routes document both answers: JSON, and server-sent events with "stream": true.
    for (const path of ['/v1/generate', '/v1/search/generate']) {
      const answer = document.paths[path].post.responses['200'];
      expect(Object.keys(answer.content)).toEqual(['application/json', 'text/event-stream']);
      expect(answer.content['application/json'].schema.required).toEqual(['response', 'provider', 'model', 'request_id']);
      expect(answer.content['text/event-stream'].example).toContain('event: done');
      expect(answer.content['text/event-stream'].example).toContain('event: tool_call');
      expect(answer.description).toContain('tool_call: {index, id?, name?, arguments?}');
      expect(answer.content['application/json'].schema.properties.tool_calls.items.required).toEqual(['id', 'name', 'arguments']);
    }
    expect(document.paths['/v1/search/generate'].post.responses['200'].content['application/json'].schema.properties.results).toBeDefined();
    expect(document.paths['/v1/search/generate'].post.responses['200'].description).toContain('one results event');
    // Every reference in the document resolves.
    const references = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]);
    expect(references.length).toBeGreaterThan(3);
    for (const name of references) expect(document.components.schemas[name]).toBeDefined();
  });

  it('describes every /openai/v1 request and answer: chat completions (JSON and stream), embeddings, models, errors', async () => {
    const { app } = await build('version: 1\n');
    const document = (await app.inject({ method: 'GET', url: '/docs-json' })).json();
    const chat = document.paths['/openai/v1/chat/completions'].post;
    const chatBody = chat.requestBody.content['application/json'].schema;
    expect(chatBody.required).toEqual(['model', 'messages']);
    expect(chatBody.properties.messages).toMatchObject({ type: 'array', minItems: 1 });
    expect(chatBody.properties.messages.items.properties.role.enum).toEqual(['system', 'developer', 'user', 'assistant', 'tool']);
    // OpenAPI 3.0 has no type lists or const: they are rewritten as oneOf / nullable / enum.
    expect(chatBody.properties.stop).toMatchObject({ nullable: true, oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }] });
    expect(chatBody.properties.n).toEqual({ enum: [1] });
    expect(JSON.stringify(chatBody)).not.toMatch(/"type":\[|"const":|"type":true/);
    const chatAnswer = chat.responses['200'].content;
    expect(Object.keys(chatAnswer)).toEqual(['application/json', 'text/event-stream']);
    expect(chatAnswer['application/json'].schema.required).toEqual(['id', 'object', 'created', 'model', 'choices']);
    expect(chatAnswer['application/json'].schema.properties.choices.items.properties.message.properties.content).toEqual({ type: 'string' });
    expect(chatAnswer['text/event-stream'].example).toContain('data: [DONE]');
    expect(chat.responses.default.content['application/json'].schema.properties.error.required).toEqual(['message', 'type', 'param', 'code']);

    const embeddings = document.paths['/openai/v1/embeddings'].post;
    const embeddingsBody = embeddings.requestBody.content['application/json'].schema;
    expect(embeddingsBody.required).toEqual(['model', 'input']);
    expect(embeddingsBody.properties.input.oneOf).toEqual([
      { type: 'string', minLength: 1 },
      { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
    ]);
    expect(embeddingsBody.properties.encoding_format.enum).toEqual(['float', 'base64']);
    const embeddingsAnswer = embeddings.responses['200'].content['application/json'].schema;
    expect(embeddingsAnswer.properties.data.items.properties.embedding.oneOf).toHaveLength(2);
    expect(embeddingsAnswer.required).toEqual(['object', 'data', 'model', 'usage']);

    const models = document.paths['/openai/v1/models'].get.responses['200'].content['application/json'].schema;
    expect(models.properties.data.items.required).toEqual(['id', 'object', 'created', 'owned_by']);
    const model = document.paths['/openai/v1/models/{path}'].get;
    expect(model.parameters).toEqual([expect.objectContaining({ name: 'path', in: 'path', required: true })]);
    expect(model.responses['200'].content['application/json'].schema.required).toEqual(['id', 'object', 'created', 'owned_by']);
    for (const operation of [chat, embeddings, document.paths['/openai/v1/models'].get, model]) expect(operation.security).toBeUndefined();
  });

  it('serves Swagger UI and only its own files, outside the API token and the JWT guard', async () => {
    const { app } = await build('version: 1\n');
    const page = await app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('/docs/swagger-ui-bundle.js');
    const bundle = await app.inject({ method: 'GET', url: '/docs/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toContain('javascript');
    const init = await app.inject({ method: 'GET', url: '/docs/swagger-ui-init.js' });
    expect(init.body).toContain('"url":"/docs-json"');
    for (const url of ['/docs/package.json', '/docs/..%2fpackage.json', '/docs/index.html']) {
      expect((await app.inject({ method: 'GET', url })).statusCode).toBe(404);
    }
  });
});
