import type { LoggerService } from '@nestjs/common';
import type { AiClient } from '../ai/client/ai-client';
import type { HealthResult } from '../ai/providers/ai-provider.interface';
import type { TollgateConfig } from '../config/config.types';
import { toMetricsSettings } from '../observability/metrics-settings';
import { OPENAPI_JSON_PATH, OPENAPI_UI_PATH } from '../observability/openapi';

/** One line of the summary; `warn` lines are what leaves a first run answering 401 or open to anyone. */
export interface SummaryLine {
  level: 'log' | 'warn';
  text: string;
}

/** Every route family the API credential (api.auth) guards: Tollgate's own and each client dialect. */
const API_ROUTES = '/v1, /openai/v1, /anthropic/v1 and /gemini/v1beta';

/**
 * What a person starting the server needs to act on, without a secret: where it listens, which credential each
 * route family takes, whether an API token is set (and how to make one), the providers and where /docs and
 * /metrics are. `origin` is the listening `http://host:port`.
 */
export function startupSummary(config: TollgateConfig, origin: string, providers: Array<Record<string, unknown>>): SummaryLine[] {
  const base = `${origin}${config.server.basePath}`;
  const lines: SummaryLine[] = [{ level: 'log', text: `configuration: ${config.file ?? 'built-in defaults (no configuration file)'}` }];
  lines.push({ level: 'log', text: authLine(config) });
  lines.push({ level: 'log', text: surfacesLine(base) });
  lines.push(...apiCredentialLines(config, base));
  lines.push(mcpLine(config, base));
  const defaultProvider = providers.find((provider) => provider.default === true)?.name;
  lines.push({ level: 'log', text: `providers: ${providers.map((provider) => provider.name).join(', ') || 'none'}${defaultProvider ? ` (default ${String(defaultProvider)})` : ''}` });
  for (const created of config.environmentProviders) {
    lines.push({ level: 'log', text: `provider ${created.name}: created from ${created.variables.join(', ')} (no providers: section in the configuration)` });
  }
  const metrics = toMetricsSettings(config.document);
  const metricsText = metrics.enabled ? `${base}/metrics${metricsAccess(config, metrics.token !== undefined)}` : 'off (metrics.enabled: false)';
  lines.push({ level: 'log', text: `API docs: ${base}${OPENAPI_UI_PATH} (OpenAPI JSON at ${base}${OPENAPI_JSON_PATH}); metrics: ${metricsText}` });
  return lines;
}

/** Who may read /metrics, and what an open one leaves out (docs/governance.md#metrics). */
function metricsAccess(config: TollgateConfig, tokenSet: boolean): string {
  if (tokenSet) return ' (Bearer metrics.token)';
  return config.ledger.enabled ? ' (open: the ledger summed over tenants; set metrics.token for per-tenant figures)' : ' (open)';
}

function authLine(config: TollgateConfig): string {
  const auth = config.auth;
  if (!auth) return 'AuthModule: off (JWT, tenancy and RBAC; set JWT_SECRET or an auth: section to turn it on)';
  const tenancy = [
    auth.validateSubdomain ? 'subdomain' : undefined,
    auth.validatePathnameSlug ? 'pathname slug' : undefined,
    auth.validateTenantId ? 'tenant id' : undefined,
  ].filter(Boolean);
  return `AuthModule: JWT on; tenancy checks: ${tenancy.join(', ') || 'none'}; RBAC ${auth.rbacEnabled ? 'on' : 'off'}`;
}

/** Each surface with the base URL its clients are given (docs/clients.md). */
function surfacesLine(base: string): string {
  return (
    `AI surfaces: ${base}/v1 (Tollgate's own), ${base}/openai/v1 (OpenAI chat completions and responses; OPENAI_BASE_URL), ` +
    `${base}/anthropic/v1 (Anthropic Messages; ANTHROPIC_BASE_URL=${base}/anthropic), ` +
    `${base}/gemini/v1beta (Gemini; GOOGLE_GEMINI_BASE_URL=${base}/gemini)`
  );
}

/** MCP over Streamable HTTP and the credential it takes (mcp.auth), or how to turn it on. */
function mcpLine(config: TollgateConfig, base: string): SummaryLine {
  const mcp = config.mcp;
  if (!mcp.enabled) return { level: 'log', text: 'MCP: off over HTTP (mcp.enabled: false); tollgate mcp --stdio serves it on stdio' };
  const at = `MCP: ${base}${mcp.path} (Streamable HTTP)`;
  if (mcp.auth === 'none') return { level: 'warn', text: `${at} answers anyone without a credential (mcp.auth: none)` };
  if (mcp.auth === 'jwt') return { level: 'log', text: `${at}: the AuthModule's JWT (mcp.auth: jwt)` };
  if (mcp.token !== undefined) return { level: 'log', text: `${at}: Bearer token (mcp.token, else api.token) or an API key; a token is set` };
  return { level: 'warn', text: `${at}: no token is set (mcp.token, else api.token): a call without an API key answers 401` };
}

function apiCredentialLines(config: TollgateConfig, base: string): SummaryLine[] {
  const { auth, token } = config.ai.api;
  if (auth === 'none') {
    return [
      {
        level: 'warn',
        text: `api.auth: none: ${API_ROUTES} answer anyone who can reach ${base} without a credential; use it only where nobody else can connect`,
      },
    ];
  }
  if (auth === 'jwt') return [{ level: 'log', text: `${API_ROUTES}: the AuthModule's JWT (api.auth: jwt)` }];
  if (token !== undefined) {
    return [
      {
        level: 'log',
        text: `${API_ROUTES}: API token (Authorization: Bearer <API_TOKEN>, or x-api-key on /anthropic/v1, x-goog-api-key on /gemini/v1beta); a token is set`,
      },
    ];
  }
  return [
    {
      level: 'warn',
      text:
        `no API token is set: every ${API_ROUTES} call answers 401. Make one with \`tollgate secret\` and start with ` +
        'API_TOKEN=<that value> (or api.token_env in the configuration); then send Authorization: Bearer <that value>',
    },
  ];
}

/** The line for a provider's first health probe once it settles. */
export function probeLine(provider: Record<string, unknown>, result: HealthResult): SummaryLine {
  const at = `provider ${String(provider.name)} (${String(provider.kind)}) at ${String(provider.url ?? 'its default URL')}`;
  if (result.status === 'healthy') return { level: 'log', text: `${at}: answered its first health probe, ready${result.model ? ` (model ${result.model})` : ''}` };
  const state = result.reachable ? 'reachable but not ready' : 'did not answer its first health probe';
  return { level: 'warn', text: `${at}: ${state}${result.error ? ` (${result.error})` : ''}; /readyz answers 503 until a provider is ready` };
}

/**
 * Logs the summary, then one "checking" line per provider and a follow-up line as each first probe settles;
 * the listening server is never held up by a probe. Resolves once every probe has been reported.
 */
export async function logStartupSummary(logger: LoggerService, config: TollgateConfig, origin: string, client: AiClient): Promise<void> {
  const providers = client.describeProviders();
  for (const line of startupSummary(config, origin, providers)) logger[line.level](line.text);
  await Promise.all(
    providers.map(async (provider) => {
      logger.log(`provider ${String(provider.name)} (${String(provider.kind)}) at ${String(provider.url ?? 'its default URL')}: checking its health`);
      const line = probeLine(provider, await client.healthCheck(String(provider.name)));
      logger[line.level](line.text);
    }),
  );
}
