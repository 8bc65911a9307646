import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { createReadStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageVersion } from '../common/packaged-files';

export const OPENAPI_UI_PATH = '/docs';
export const OPENAPI_JSON_PATH = '/docs-json';
export const OPENAPI_YAML_PATH = '/docs-yaml';

export const API_TOKEN_SCHEME = 'api_token';
export const JWT_SCHEME = 'jwt';
export const METRICS_TOKEN_SCHEME = 'metrics_token';
export const MCP_TOKEN_SCHEME = 'mcp_token';

/** The Swagger UI files the page loads, served from the swagger-ui-dist package; nothing else is readable. */
const UI_ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
const UI_ASSET_DIRECTORY = dirname(require.resolve('swagger-ui-dist/package.json'));

/** The OpenAPI 3 document of every controller route of the application. */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Tollgate')
    .setDescription(
      'AI provider gateway (/v1, /openai/v1) and the server routes. /v1 and /openai/v1 take the API token (api.auth: token, the ' +
        "default) or the AuthModule's JWT (api.auth: jwt); routes behind the AuthModule take the JWT; /metrics takes metrics.token " +
        'when one is set; /mcp takes mcp.token or the JWT.',
    )
    .setVersion(packageVersion())
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'opaque token', description: 'The API token (API_TOKEN or api.token; make one with `tollgate secret`), under api.auth: token' },
      API_TOKEN_SCHEME,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "The AuthModule's JWT: routes behind the AuthModule, and /v1 and /openai/v1 under api.auth: jwt" },
      JWT_SCHEME,
    )
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'metrics.token (METRICS_TOKEN), when one is set' }, METRICS_TOKEN_SCHEME)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'mcp.token (MCP_TOKEN), under mcp.auth: token' }, MCP_TOKEN_SCHEME)
    // Either credential: which one a deployment takes is its api.auth setting.
    .addSecurityRequirements(API_TOKEN_SCHEME)
    .addSecurityRequirements(JWT_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config);
  // Swagger names each @Body() DTO but sees no properties (they carry class-validator decorators, not
  // @ApiProperty); the same constraints the ValidationPipe enforces become their JSON Schemas.
  // Every validated class goes in, so nested DTOs that a body schema references resolve too.
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...(validationMetadatasToSchemas({ refPointerPrefix: '#/components/schemas/' }) as object) },
  };
  return document;
}

/** The part of a Fastify instance the UI needs (structural, like the other hooks). */
interface UiRouteHost {
  get(
    path: string,
    handler: (request: { params: Record<string, string> }, reply: { type(value: string): unknown; header(name: string, value: string): unknown; code(status: number): unknown; send(payload?: unknown): unknown }) => unknown,
  ): unknown;
}

/**
 * The document at /docs-json and /docs-yaml (SwaggerModule, built on first request), and Swagger UI at /docs,
 * all under `base_path` and outside every guard. The UI's three files are served here rather than through
 * @fastify/static, whose current major is ESM-only underneath (Node before 20.19 and Jest cannot load it).
 */
export function installOpenApi(app: INestApplication, basePath: string): void {
  SwaggerModule.setup(OPENAPI_UI_PATH, app, () => createOpenApiDocument(app), {
    useGlobalPrefix: true,
    ui: false,
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    yamlDocumentUrl: OPENAPI_YAML_PATH,
  });
  const ui = `${basePath}${OPENAPI_UI_PATH}`;
  const fastify = app.getHttpAdapter().getInstance() as UiRouteHost;
  fastify.get(ui, (_request, reply) => {
    reply.type('text/html; charset=utf-8');
    return reply.send(uiPage(ui));
  });
  fastify.get(`${ui}/swagger-ui-init.js`, (_request, reply) => {
    reply.type('text/javascript; charset=utf-8');
    return reply.send(uiInitScript(`${basePath}${OPENAPI_JSON_PATH}`));
  });
  fastify.get(`${ui}/:asset`, (request, reply) => {
    const type = Object.hasOwn(UI_ASSETS, request.params.asset) ? UI_ASSETS[request.params.asset] : undefined;
    if (type === undefined) {
      reply.code(404);
      return reply.send({ error: { type: 'not_found', message: 'No such file.' } });
    }
    reply.type(type);
    reply.header('cache-control', 'public, max-age=86400');
    return reply.send(createReadStream(join(UI_ASSET_DIRECTORY, request.params.asset)));
  });
}

function uiPage(ui: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Tollgate API</title>
<link rel="stylesheet" href="${ui}/swagger-ui.css">
<link rel="icon" type="image/png" href="${ui}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${ui}/swagger-ui-bundle.js"></script>
<script src="${ui}/swagger-ui-init.js"></script>
</body>
</html>
`;
}

function uiInitScript(documentUrl: string): string {
  return `window.ui = SwaggerUIBundle(${JSON.stringify({ url: documentUrl, dom_id: '#swagger-ui', deepLinking: true })});\n`;
}
