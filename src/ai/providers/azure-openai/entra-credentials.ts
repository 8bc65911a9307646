/**
 * Microsoft Entra tokens for Azure OpenAI by the OAuth 2.0 client-credentials grant (an app registration's client id
 * and secret): `POST <authority>/<tenant>/oauth2/v2.0/token` with scope `https://cognitiveservices.azure.com/.default`.
 * A token is reused until five minutes before it expires (half its lifetime, for one shorter than ten minutes);
 * concurrent calls that find it stale share one refresh. A 401 from Azure drops it, so the next call fetches a new
 * one. The token endpoint's error text never leaves this file: it can name the tenant and the application.
 */
import { AuthenticationError, ConnectionError } from '../../errors';
import type { AzureEntraSettings } from '../ai-provider.interface';

export const ENTRA_DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';
export const ENTRA_COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';
const REFRESH_MARGIN_MS = 5 * 60_000;

interface CachedToken {
  token: string;
  /** When a call stops reusing it and fetches the next. */
  refreshAt: number;
}

export class EntraCredentials {
  private cached?: CachedToken;
  private refreshing?: Promise<CachedToken>;
  readonly #secret: string;
  private readonly tokenUrl: string;

  constructor(
    private readonly provider: string,
    private readonly settings: AzureEntraSettings,
    private readonly timeoutMs: number,
  ) {
    this.#secret = settings.clientSecret;
    const authority = (settings.authority ?? ENTRA_DEFAULT_AUTHORITY).replace(/\/+$/, '');
    this.tokenUrl = `${authority}/${encodeURIComponent(settings.tenantId)}/oauth2/v2.0/token`;
  }

  async authorization(): Promise<Record<string, string>> {
    const cached = this.cached !== undefined && Date.now() < this.cached.refreshAt ? this.cached : await this.refresh();
    return { authorization: `Bearer ${cached.token}` };
  }

  /** Azure refused the token (revoked, or expired early): the next call fetches another. */
  forget(): void {
    this.cached = undefined;
  }

  private refresh(): Promise<CachedToken> {
    this.refreshing ??= this.fetchToken().then(
      (token) => {
        this.cached = token;
        this.refreshing = undefined;
        return token;
      },
      (error: unknown) => {
        this.refreshing = undefined;
        throw error;
      },
    );
    return this.refreshing;
  }

  private async fetchToken(): Promise<CachedToken> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.settings.clientId,
      client_secret: this.#secret,
      scope: ENTRA_COGNITIVE_SERVICES_SCOPE,
    });
    const started = Date.now();
    let response: Response;
    try {
      response = await fetch(this.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch {
      throw new ConnectionError(`${this.provider}: the Microsoft Entra token endpoint did not answer`, { provider: this.provider });
    }
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!response.ok) {
      // `error` is one of OAuth's fixed codes; `error_description` (AADSTS text) stays here.
      const code = typeof body?.error === 'string' && /^[a-z_]{1,40}$/.test(body.error) ? ` (${body.error})` : '';
      throw new AuthenticationError(`${this.provider}: Microsoft Entra refused the client credentials: ${response.status}${code}`, { provider: this.provider });
    }
    const token = body?.access_token;
    const lifetime = Number(body?.expires_in);
    if (typeof token !== 'string' || token === '' || !Number.isFinite(lifetime) || lifetime <= 0) {
      throw new AuthenticationError(`${this.provider}: the Microsoft Entra token endpoint answered without a token`, { provider: this.provider });
    }
    const lifetimeMs = lifetime * 1000;
    return { token, refreshAt: started + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2) };
  }
}
