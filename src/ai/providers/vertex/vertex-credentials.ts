/**
 * The bearer token of Vertex AI calls, from google-auth-library: a configured access token as is; else the
 * credentials file or Application Default Credentials. The library caches each token and fetches the next one
 * before the current one expires (five minutes ahead for workload identity federation). Service-account keys sign
 * their own JWT per scope (`useJWTAccessWithScope`, as Google's Cloud client libraries do), so no token endpoint is
 * called for them; workload identity federation exchanges its subject token at the file's `token_url`.
 * The library's errors are never surfaced: they can carry token endpoints and upstream bodies.
 */
import { readFileSync } from 'node:fs';
import type { AuthClient, GoogleAuth } from 'google-auth-library';
import { AuthenticationError, TollgateError } from '../../errors';
import { mapNetworkError } from '../../../upstream/upstream-errors';
import type { VertexSettings } from '../ai-provider.interface';

export const VERTEX_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

export class VertexCredentials {
  /** Settled once per process; a failed load is forgotten so the next call tries again. */
  private client?: Promise<AuthClient>;
  private readonly auth?: GoogleAuth;
  private readonly fixedToken?: string;
  private readonly fromFile: boolean;

  constructor(
    private readonly provider: string,
    settings: VertexSettings,
  ) {
    this.fromFile = settings.credentialsFile !== undefined;
    if (settings.accessToken !== undefined) {
      this.fixedToken = settings.accessToken;
      return;
    }
    if (settings.credentialsFile !== undefined) readableJson(provider, settings.credentialsFile);
    // Required here: a configuration without a Vertex provider loads no Google auth library (decision C13).
    const { GoogleAuth: GoogleAuthClass } = require('google-auth-library') as typeof import('google-auth-library');
    this.auth = new GoogleAuthClass({ keyFile: settings.credentialsFile, scopes: [VERTEX_SCOPE] });
    this.auth.useJWTAccessWithScope = true;
  }

  /** How the credentials were given, for describe(). */
  get source(): 'access_token' | 'credentials_file' | 'application_default' {
    if (this.fixedToken !== undefined) return 'access_token';
    return this.fromFile ? 'credentials_file' : 'application_default';
  }

  /** `Bearer <token>`, cached by the library and refreshed before expiry. */
  async authorization(): Promise<string> {
    if (this.fixedToken !== undefined) return `Bearer ${this.fixedToken}`;
    let value: string | null;
    try {
      this.client ??= this.auth!.getClient();
      const headers = await (await this.client).getRequestHeaders();
      value = headers.get('authorization');
    } catch (error) {
      throw this.tokenError(error);
    }
    if (!value) throw new AuthenticationError(`${this.provider}: the Google credentials gave no access token`, { provider: this.provider });
    return value;
  }

  private tokenError(error: unknown): TollgateError {
    this.client = undefined;
    // A token endpoint that answered (any status) refused the credentials; one never reached is a transport failure.
    const status = (error as { response?: { status?: unknown } })?.response?.status;
    if (typeof status === 'number') {
      return new AuthenticationError(`${this.provider}: the Google token endpoint refused the credentials (${status})`, { provider: this.provider });
    }
    if (/^E[A-Z]+$/.test(String((error as { code?: unknown })?.code))) return mapNetworkError(error, this.provider);
    return new AuthenticationError(`${this.provider}: could not obtain a Google access token from the configured credentials`, { provider: this.provider });
  }
}

/** Refused at start, naming the option: a missing or unreadable file, or one that is not JSON. */
function readableJson(provider: string, path: string): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new TollgateError(`${provider}: vertex.credentials_file cannot be read (${typeof code === 'string' ? code : 'error'})`);
  }
  try {
    JSON.parse(text);
  } catch {
    throw new TollgateError(`${provider}: vertex.credentials_file is not a JSON credentials file`);
  }
}
