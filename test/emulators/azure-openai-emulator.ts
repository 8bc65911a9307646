/**
 * Emulates an Azure OpenAI resource: the OpenAI chat-completions wire format (openai-emulator.ts) at Azure's paths.
 * - v1 API: `/openai/v1/chat/completions`, `/openai/v1/responses`, `/openai/v1/embeddings`, `/openai/v1/models`, the
 *   deployment in `model`.
 * - deployment-style API: `/openai/deployments/<deployment>/chat/completions|embeddings?api-version=<v>` and
 *   `/openai/models?api-version=<v>`; a missing api-version is a 400, one the emulator does not know a 404, as Azure.
 * - auth: the `api-key` header, or `Authorization: Bearer <entra token>`: the configured one, or one this emulator's
 *   Microsoft Entra endpoint issued and that has not expired; else 401 `{"error":{"code":"401",...}}`.
 * - Entra: `POST /<tenant>/oauth2/v2.0/token`, the client-credentials grant (form-encoded `grant_type`, `client_id`,
 *   `client_secret`, `scope` `https://cognitiveservices.azure.com/.default`), answering `{token_type, expires_in,
 *   access_token}`; a wrong secret is 401 `invalid_client`, another tenant 400 `invalid_request`, another scope 400
 *   `invalid_scope`, each with an AADSTS description, as Entra answers.
 * - deployments name models: an unknown one is 404 `DeploymentNotFound`; answers name the deployed model.
 * - content filter: a user message holding FILTERED-PROMPT is refused with Azure's 400 `content_filter` body (hate at
 *   high, jailbreak detected); FILTERED-OUTPUT gets a 200 cut with `finish_reason: content_filter` and no content.
 *   Every answer carries `prompt_filter_results` and per-choice `content_filter_results`, a stream's first chunk
 *   only the prompt's (with empty `choices` and model), as Azure sends them.
 */
import type { EmulatorReply, EmulatorRequest } from './emulator-server';
import { startEmulator } from './emulator-server';
import { OpenAiEmulator, UPSTREAM_MARKER } from './openai-emulator';

export const AZURE_API_VERSIONS = ['2024-10-21', '2025-04-01-preview'];
export const FILTERED_PROMPT = 'FILTERED-PROMPT';
export const FILTERED_OUTPUT = 'FILTERED-OUTPUT';

export interface AzureOpenAiEmulatorOptions {
  apiKey: string;
  /** Accepted as `Authorization: Bearer` in place of the key. */
  entraToken?: string;
  /** The app registration the Entra token endpoint issues tokens to. */
  entraApp?: { tenantId: string; clientId: string; clientSecret: string; tokenLifetimeSeconds: number };
  /** Deployment name -> the model it serves. */
  deployments: Record<string, string>;
  dimensions?: number;
}

const SAFE = { filtered: false, severity: 'safe' };
const SAFE_RESULTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const PROMPT_RESULTS = [{ prompt_index: 0, content_filter_results: { ...SAFE_RESULTS, jailbreak: { filtered: false, detected: false } } }];

export class AzureOpenAiEmulator extends OpenAiEmulator {
  readonly azure: AzureOpenAiEmulatorOptions;
  /** Entra tokens issued, by token: when each expires. */
  readonly entraTokens = new Map<string, number>();

  private constructor(server: OpenAiEmulator['server'], options: AzureOpenAiEmulatorOptions) {
    const models = Object.values(options.deployments);
    super(server, {
      flavour: 'openai',
      apiKey: options.apiKey,
      chatModels: models,
      embeddingModels: models,
      dimensions: options.dimensions ?? 4,
      reasoningModels: [],
    });
    this.azure = options;
  }

  static async startAzure(options: AzureOpenAiEmulatorOptions): Promise<AzureOpenAiEmulator> {
    const emulator = new AzureOpenAiEmulator(await startEmulator(), options);
    emulator.registerRoutes();
    return emulator;
  }

  /** The resource endpoint, as an adapter is configured with it. */
  override get url(): string {
    return this.server.url;
  }

  protected override registerRoutes(): void {
    const v1 = (operation: (req: EmulatorRequest) => EmulatorReply) => (req: EmulatorRequest) =>
      this.guarded(req, () => this.deployed(req, (req.body as { model?: unknown } | undefined)?.model, operation));
    const versioned = (operation: (req: EmulatorRequest) => EmulatorReply) => (req: EmulatorRequest) =>
      this.guarded(req, () => this.apiVersionFailure(req) ?? this.deployed(req, req.params.deployment, operation));
    this.server.route('POST', '/openai/v1/chat/completions', v1((req) => this.filteredChat(req)));
    this.server.route('POST', '/openai/v1/embeddings', v1((req) => this.embeddings(req)));
    this.server.route('POST', '/openai/v1/responses', v1((req) => this.responses(req)));
    this.server.route('GET', '/openai/v1/models', (req) => this.guarded(req, () => this.models()));
    this.server.route('POST', /^\/openai\/deployments\/(?<deployment>[^/]+)\/chat\/completions$/, versioned((req) => this.filteredChat(req)));
    this.server.route('POST', /^\/openai\/deployments\/(?<deployment>[^/]+)\/embeddings$/, versioned((req) => this.embeddings(req)));
    this.server.route('GET', '/openai/models', (req) => this.guarded(req, () => this.apiVersionFailure(req) ?? this.models()));
    this.server.route('POST', /^\/(?<tenant>[^/]+)\/oauth2\/v2\.0\/token$/, (req) => this.issueEntraToken(req));
  }

  /** Makes every Entra token issued so far expired, as if an hour had passed. */
  expireEntraTokens(): void {
    for (const token of this.entraTokens.keys()) this.entraTokens.set(token, 0);
  }

  private issueEntraToken(req: EmulatorRequest): EmulatorReply {
    const app = this.azure.entraApp;
    const form = new URLSearchParams(req.rawBody);
    const refusal = (status: number, error: string, description: string): EmulatorReply => ({
      status,
      body: { error, error_description: `${description} Trace ID: 0000. ${UPSTREAM_MARKER}`, error_codes: [Number(description.slice(5, 12))] },
    });
    if (!app || req.params.tenant !== app.tenantId) return refusal(400, 'invalid_request', `AADSTS90002: Tenant '${req.params.tenant}' not found.`);
    if (form.get('grant_type') !== 'client_credentials') return refusal(400, 'unsupported_grant_type', 'AADSTS70003: The app requested an unsupported grant type.');
    if (form.get('client_id') !== app.clientId || form.get('client_secret') !== app.clientSecret) {
      return refusal(401, 'invalid_client', `AADSTS7000215: Invalid client secret provided for app '${app.clientId}'.`);
    }
    if (form.get('scope') !== 'https://cognitiveservices.azure.com/.default') return refusal(400, 'invalid_scope', 'AADSTS1002012: The provided value for scope is not valid.');
    const token = `entra-${this.entraTokens.size + 1}-${app.clientId}`;
    this.entraTokens.set(token, Date.now() + app.tokenLifetimeSeconds * 1000);
    return { body: { token_type: 'Bearer', expires_in: app.tokenLifetimeSeconds, ext_expires_in: app.tokenLifetimeSeconds, access_token: token } };
  }

  protected override authFailure(req: EmulatorRequest): EmulatorReply | undefined {
    if (req.headers['api-key'] === this.azure.apiKey) return undefined;
    if (this.azure.entraToken !== undefined && req.headers.authorization === `Bearer ${this.azure.entraToken}`) return undefined;
    const bearer = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const expires = this.entraTokens.get(bearer);
    if (expires !== undefined && expires > Date.now()) return undefined;
    const message =
      expires !== undefined
        ? 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.'
        : 'Access denied due to invalid subscription key or wrong API endpoint.';
    return { status: 401, body: { error: { code: '401', message: `${message} ${UPSTREAM_MARKER}` } } };
  }

  private apiVersionFailure(req: EmulatorRequest): EmulatorReply | undefined {
    const version = req.query.get('api-version');
    if (version === null) {
      return { status: 400, body: { error: { code: 'BadRequest', message: `Missing API version parameter. ${UPSTREAM_MARKER}` } } };
    }
    if (!AZURE_API_VERSIONS.includes(version)) return { status: 404, body: { error: { code: '404', message: `Resource not found ${UPSTREAM_MARKER}` } } };
    return undefined;
  }

  /** Runs `operation` with the deployment's model in the body, as the OpenAI emulator knows models. */
  private deployed(req: EmulatorRequest, deployment: unknown, operation: (req: EmulatorRequest) => EmulatorReply): EmulatorReply {
    const model = typeof deployment === 'string' ? this.azure.deployments[deployment] : undefined;
    if (model === undefined) {
      return {
        status: 404,
        body: {
          error: {
            code: 'DeploymentNotFound',
            message: `The API deployment for this resource does not exist. ${UPSTREAM_MARKER}`,
          },
        },
      };
    }
    return operation({ ...req, body: { ...(req.body as object), model } });
  }

  private filteredChat(req: EmulatorRequest): EmulatorReply {
    const body = req.body as { messages?: Array<{ role?: string; content?: unknown }>; stream?: boolean; model: string };
    const userText = JSON.stringify((body.messages ?? []).filter((m) => m.role === 'user'));
    if (userText.includes(FILTERED_PROMPT)) return promptFiltered();
    if (userText.includes(FILTERED_OUTPUT)) return outputFiltered(body.model, body.stream === true);
    const reply = this.chat(req);
    if (reply.status !== undefined && reply.status !== 200) return reply;
    if (reply.chunks) {
      const first = { id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: PROMPT_RESULTS };
      return { ...reply, chunks: [`data: ${JSON.stringify(first)}\n\n`, ...reply.chunks] };
    }
    const completion = reply.body as { choices: object[] };
    return {
      ...reply,
      body: {
        ...completion,
        prompt_filter_results: PROMPT_RESULTS,
        choices: completion.choices.map((choice) => ({ ...choice, content_filter_results: SAFE_RESULTS })),
      },
    };
  }
}

/** Azure's documented refusal of a filtered prompt. */
function promptFiltered(): EmulatorReply {
  return {
    status: 400,
    body: {
      error: {
        message: `The response was filtered due to the prompt triggering Azure OpenAI's content management policy. ${UPSTREAM_MARKER}`,
        type: null,
        param: 'prompt',
        code: 'content_filter',
        status: 400,
        innererror: {
          code: 'ResponsibleAIPolicyViolation',
          content_filter_result: {
            hate: { filtered: true, severity: 'high' },
            jailbreak: { filtered: true, detected: true },
            self_harm: SAFE,
            sexual: SAFE,
            violence: { filtered: false, severity: 'low' },
          },
        },
      },
    },
  };
}

/** A completion the output filter cut: no content, `finish_reason: content_filter`. */
function outputFiltered(model: string, stream: boolean): EmulatorReply {
  const results = { ...SAFE_RESULTS, violence: { filtered: true, severity: 'medium' } };
  const base = { id: 'chatcmpl-filtered', created: 1_700_000_000, model };
  if (stream) {
    const frames = [
      { id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: PROMPT_RESULTS },
      { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, content_filter_results: {} }] },
      { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter', content_filter_results: results }] },
    ];
    return { chunks: [...frames.map((f) => `data: ${JSON.stringify(f)}\n\n`), 'data: [DONE]\n\n'], headers: { 'content-type': 'text/event-stream' } };
  }
  return {
    body: {
      ...base,
      object: 'chat.completion',
      prompt_filter_results: PROMPT_RESULTS,
      choices: [{ index: 0, finish_reason: 'content_filter', message: { role: 'assistant' }, content_filter_results: results }],
      usage: { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 },
    },
  };
}
