/**
 * Vertex AI emulator: Google's OAuth side and the Vertex paths, in front of the Gemini and Anthropic emulators.
 * - Auth: every model call needs `Authorization: Bearer`, one of: a self-signed service-account JWT (RS256 under
 *   the key this emulator issued, `kid` = private_key_id, `iss` = client_email, cloud-platform `scope`, unexpired);
 *   an access token this emulator's STS endpoint issued and that has not expired; or a configured static token.
 *   Anything else is Google's 401 UNAUTHENTICATED.
 * - `POST /v1/token`: the STS token exchange of workload identity federation (form-encoded
 *   `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `subject_token`, `audience`, `scope`), answering
 *   `{access_token, issued_token_type, token_type, expires_in}`; a wrong subject token is 400 `invalid_grant`.
 * - `/v1/projects/<p>/locations/<l>/publishers/google/models/<m>:generateContent|streamGenerateContent` is passed
 *   to the Gemini emulator; `:predict` embeds (`instances[].content` -> `predictions[].embeddings.values`; the
 *   gemini-embedding models take one instance per call, as on Vertex); `:countTokens` counts.
 * - `.../publishers/anthropic/models/<m>:rawPredict|streamRawPredict` needs `anthropic_version: vertex-2023-10-16`
 *   and no `model` in the body (it is in the URL), then is passed to the Anthropic emulator with the caller's
 *   `anthropic-beta`; `count-tokens:rawPredict` counts. What Anthropic's own API has and Claude on Vertex does not is
 *   refused as Vertex refuses it: `mcp_servers`, the web fetch and code execution tools, Files API documents, the
 *   betas of those features and first-party betas Vertex does not take, each named as Vertex names it. Another project or location is 403 PERMISSION_DENIED.
 * Every error body carries a marker so tests can prove none reaches an error message.
 */
import { createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { type AnthropicEmulator, ANTHROPIC_EMULATOR_KEY, startAnthropicEmulator } from './anthropic-emulator';
import type { EmulatorReply, EmulatorRequest, EmulatorServer } from './emulator-server';
import { startEmulator } from './emulator-server';
import { type GeminiEmulator, GEMINI_EMULATOR_KEY, startGeminiEmulator } from './gemini-emulator';

export const VERTEX_BODY_MARKER = 'vertex-upstream-body-2b7e';
export const VERTEX_PROJECT = 'tollgate-test';
export const VERTEX_LOCATION = 'europe-west4';
export const VERTEX_CLIENT_EMAIL = 'tollgate@tollgate-test.iam.gserviceaccount.com';
export const VERTEX_KEY_ID = 'emulated-key-id-1';
export const SUBJECT_TOKEN = 'federated-subject-token-8c21';
const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';

const MODEL_PATH =
  /^\/v1\/projects\/(?<project>[^/]+)\/locations\/(?<location>[^/]+)\/publishers\/(?<publisher>google|anthropic)\/models\/(?<model>[^/:]+):(?<method>[A-Za-z]+)$/;

export interface VertexEmulatorOptions {
  /** Bearer tokens accepted as they are (a configured access_token). */
  staticTokens: string[];
  /** `expires_in` of the tokens the STS endpoint issues, in seconds. */
  tokenLifetimeSeconds: number;
  embeddingModels: string[];
  dimensions: number;
}

export class VertexEmulator {
  /** Token exchanges the STS endpoint answered with a token. */
  tokensIssued = 0;
  /** Self-signed JWTs that passed verification, by their text (one per distinct token). */
  readonly signedTokensSeen = new Set<string>();
  readonly options: VertexEmulatorOptions;
  private readonly issued = new Map<string, number>();
  private readonly publicKey: KeyObject;
  private readonly privateKeyPem: string;

  private constructor(
    readonly server: EmulatorServer,
    readonly gemini: GeminiEmulator,
    readonly anthropic: AnthropicEmulator,
    options: Partial<VertexEmulatorOptions>,
  ) {
    this.options = {
      staticTokens: options.staticTokens ?? [],
      tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? 3600,
      embeddingModels: options.embeddingModels ?? ['text-embedding-005', 'gemini-embedding-001'],
      dimensions: options.dimensions ?? 4,
    };
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey;
    this.privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }

  static async start(options: Partial<VertexEmulatorOptions> = {}): Promise<VertexEmulator> {
    const emulator = new VertexEmulator(await startEmulator(), await startGeminiEmulator(), await startAnthropicEmulator(), options);
    emulator.server.route('POST', '/v1/token', (req) => emulator.exchange(req));
    emulator.server.route('POST', MODEL_PATH, (req) => emulator.authFailure(req) ?? emulator.model(req));
    return emulator;
  }

  /** The `url` of a vertex registration: Google's `/v1` root on this emulator. */
  get url(): string {
    return `${this.server.url}/v1`;
  }

  /** A service-account key file's content, signed for by this emulator's key pair. */
  serviceAccountKey(): Record<string, string> {
    return {
      type: 'service_account',
      project_id: VERTEX_PROJECT,
      private_key_id: VERTEX_KEY_ID,
      private_key: this.privateKeyPem,
      client_email: VERTEX_CLIENT_EMAIL,
      client_id: '1234567890',
      token_uri: `${this.server.url}/v1/token`,
    };
  }

  /** A workload identity federation file whose subject token is read from `subjectTokenFile`. */
  externalAccount(subjectTokenFile: string): Record<string, unknown> {
    return {
      type: 'external_account',
      audience: `//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/emulator`,
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${this.server.url}/v1/token`,
      credential_source: { file: subjectTokenFile },
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.server.close(), this.gemini.close(), this.anthropic.close()]);
  }

  private exchange(req: EmulatorRequest): EmulatorReply {
    const form = new URLSearchParams(req.rawBody);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange') {
      return { status: 400, body: { error: 'unsupported_grant_type', error_description: `grant_type ${VERTEX_BODY_MARKER}` } };
    }
    if (form.get('subject_token') !== SUBJECT_TOKEN || !form.get('audience')?.startsWith('//iam.googleapis.com/')) {
      return { status: 400, body: { error: 'invalid_grant', error_description: `The subject token is invalid. ${VERTEX_BODY_MARKER}` } };
    }
    if (!(form.get('scope') ?? '').split(' ').includes(CLOUD_PLATFORM)) {
      return { status: 400, body: { error: 'invalid_scope', error_description: `scope ${VERTEX_BODY_MARKER}` } };
    }
    this.tokensIssued += 1;
    const token = `ya29.emulated-${this.tokensIssued}`;
    this.issued.set(token, Date.now() + this.options.tokenLifetimeSeconds * 1000);
    return {
      body: {
        access_token: token,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: this.options.tokenLifetimeSeconds,
      },
    };
  }

  private authFailure(req: EmulatorRequest): EmulatorReply | undefined {
    const header = req.headers.authorization;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
    if (token !== undefined) {
      if (this.options.staticTokens.includes(token)) return undefined;
      if ((this.issued.get(token) ?? 0) > Date.now()) return undefined;
      if (this.verifiedJwt(token)) return undefined;
    }
    return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
  }

  private verifiedJwt(token: string): boolean {
    const parts = token.split('.');
    if (parts.length !== 3) return false;
    const [header, payload] = parts.slice(0, 2).map((part) => {
      try {
        return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
    if (header.alg !== 'RS256' || header.kid !== VERTEX_KEY_ID) return false;
    const verifier = createVerify('RSA-SHA256');
    verifier.update(`${parts[0]}.${parts[1]}`);
    if (!verifier.verify(this.publicKey, Buffer.from(parts[2], 'base64url'))) return false;
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
    const valid = payload.iss === VERTEX_CLIENT_EMAIL && scopes.includes(CLOUD_PLATFORM) && typeof payload.exp === 'number' && payload.exp * 1000 > Date.now();
    if (valid) this.signedTokensSeen.add(token);
    return valid;
  }

  private async model(req: EmulatorRequest): Promise<EmulatorReply> {
    const { project, location, publisher, model, method } = req.params;
    if (project !== VERTEX_PROJECT || location !== VERTEX_LOCATION) {
      return googleError(403, 'PERMISSION_DENIED', `Permission denied on resource project ${project}.`);
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (publisher === 'google') {
      if (method === 'generateContent' || method === 'streamGenerateContent') {
        const query = method === 'streamGenerateContent' && req.query.get('alt') === 'sse' ? '?alt=sse' : '';
        return forward(`${this.gemini.url}/models/${model}:${method}${query}`, { 'x-goog-api-key': GEMINI_EMULATOR_KEY }, body);
      }
      if (method === 'predict') return this.predict(model, body);
      if (method === 'countTokens') {
        if (!this.gemini.options.chatModels.includes(model)) return googleError(404, 'NOT_FOUND', `Publisher Model ${model} was not found.`);
        return { body: { totalTokens: JSON.stringify(body.contents ?? []).length, totalBillableCharacters: 4 } };
      }
    }
    if (publisher === 'anthropic' && model === 'count-tokens' && method === 'rawPredict') {
      if (!this.anthropic.options.models.includes(String(body.model))) return anthropicFailure(404, 'not_found_error', `model: ${String(body.model)}`);
      return { body: { input_tokens: JSON.stringify(body.messages ?? []).length } };
    }
    if (publisher === 'anthropic' && (method === 'rawPredict' || method === 'streamRawPredict')) {
      if (body.anthropic_version !== 'vertex-2023-10-16') return anthropicFailure(400, 'invalid_request_error', 'anthropic_version: vertex-2023-10-16 is required');
      if ('model' in body) return anthropicFailure(400, 'invalid_request_error', 'model: Extra inputs are not permitted');
      if ((method === 'streamRawPredict') !== (body.stream === true)) return anthropicFailure(400, 'invalid_request_error', 'stream does not match the method');
      const beta = typeof req.headers['anthropic-beta'] === 'string' ? req.headers['anthropic-beta'] : undefined;
      const refused = vertexRefusal(body, beta);
      if (refused) return anthropicFailure(400, 'invalid_request_error', refused);
      const { anthropic_version: _version, ...messages } = body;
      const headers = { 'x-api-key': ANTHROPIC_EMULATOR_KEY, 'anthropic-version': '2023-06-01', ...(beta !== undefined ? { 'anthropic-beta': beta } : {}) };
      return forward(`${this.anthropic.url}/v1/messages`, headers, { ...messages, model });
    }
    return googleError(400, 'INVALID_ARGUMENT', `Method ${method} is not supported for ${publisher} models.`);
  }

  private predict(model: string, body: Record<string, unknown>): EmulatorReply {
    if (!this.options.embeddingModels.includes(model)) return googleError(404, 'NOT_FOUND', `Publisher Model ${model} was not found.`);
    const instances = body.instances;
    if (!Array.isArray(instances) || instances.length === 0 || instances.some((i) => typeof (i as { content?: unknown })?.content !== 'string')) {
      return googleError(400, 'INVALID_ARGUMENT', 'instances[].content must be a string.');
    }
    if (model.startsWith('gemini-embedding') && instances.length > 1) {
      return googleError(400, 'INVALID_ARGUMENT', 'Only one instance is allowed per request for this model.');
    }
    const dimensions = ((body.parameters as { outputDimensionality?: number } | undefined)?.outputDimensionality) ?? this.options.dimensions;
    return {
      body: {
        predictions: instances.map(({ content }: { content: string }) => ({
          embeddings: { values: vertexVector(content, dimensions), statistics: { token_count: content.split(' ').length, truncated: false } },
        })),
        metadata: { billableCharacterCount: 10 },
      },
    };
  }
}

/** Deterministic vector per text, so tests can compare inputs with outputs. */
export function vertexVector(text: string, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, i) => ((text.length * 7 + i * 13) % 101) / 101);
}

/**
 * Betas Vertex refuses in the header: those of features Anthropic's own API has and Vertex does not (the MCP
 * connector, Files API, code execution, web fetch), and first-party betas Vertex was seen refusing as values it does
 * not take (the 1M context window, effort, adaptive thinking: claude-code issues 34802 and 56970).
 */
const FIRST_PARTY_BETAS = /^(mcp-client|files-api|code-execution|web-fetch|context-1m|effort|adaptive-thinking)-/;
const FIRST_PARTY_TOOLS = /^(web_fetch|code_execution)_/;

/** What Vertex refuses of a Messages body that Anthropic's own API would take, worded as the API words it. */
function vertexRefusal(body: Record<string, unknown>, beta: string | undefined): string | undefined {
  const betas = (beta ?? '').split(',').map((value) => value.trim()).filter((value) => FIRST_PARTY_BETAS.test(value));
  if (betas.length > 0) return `Unexpected value(s) ${betas.map((value) => `\`${value}\``).join(', ')} for the \`anthropic-beta\` header. Please consult our documentation at docs.anthropic.com or try again without the header.`;
  if ('mcp_servers' in body) return 'mcp_servers: Extra inputs are not permitted';
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ type?: unknown }>) : [];
  const tool = tools.findIndex((entry) => typeof entry.type === 'string' && FIRST_PARTY_TOOLS.test(entry.type));
  if (tool >= 0) return `tools.${tool}: Input tag '${String(tools[tool].type)}' found using 'type' does not match any of the expected tags`;
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : [];
  for (const [index, message] of messages.entries()) {
    const blocks = Array.isArray(message.content) ? (message.content as Array<{ type?: unknown; source?: { type?: unknown } }>) : [];
    const file = blocks.findIndex((block) => block.type === 'document' && block.source?.type === 'file');
    if (file >= 0) return `messages.${index}.content.${file}.source: Input tag 'file' found using 'type' does not match any of the expected tags`;
  }
  return undefined;
}

function googleError(code: number, status: string, message: string): EmulatorReply {
  return { status: code, body: { error: { code, message: `${message} [${VERTEX_BODY_MARKER}]`, status } } };
}

function anthropicFailure(status: number, type: string, message: string): EmulatorReply {
  return { status, body: { type: 'error', error: { type, message: `${message} [${VERTEX_BODY_MARKER}]` } } };
}

/** Passes a call to the emulator of the model's own API and its answer back: JSON, or SSE event by event. */
async function forward(url: string, headers: Record<string, string>, body: unknown): Promise<EmulatorReply> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? 'application/json';
  if (response.ok && contentType.startsWith('text/event-stream')) {
    return { status: response.status, headers: { 'content-type': contentType }, chunks: text.split(/(?<=\r?\n\r?\n)/).filter((c) => c !== '') };
  }
  return { status: response.status, headers: { 'content-type': contentType }, body: text };
}
