/**
 * Credentials of Bedrock calls: a Bedrock API key as `Authorization: Bearer`, or a SigV4 signature (service
 * `bedrock`) over the exact request, with credentials from the standard AWS chain (`AWS_*` variables, web identity,
 * shared files and `profile`, container and instance roles; cached and refreshed by the chain). The chain's and the
 * signer's errors are never surfaced: they can name files, roles and endpoints.
 */
import type { SignatureV4 } from '@smithy/signature-v4';
import { AuthenticationError } from '../../errors';
import type { BedrockSettings } from '../ai-provider.interface';

export class BedrockAuth {
  private readonly signer?: SignatureV4;
  readonly #apiKey?: string;

  constructor(
    private readonly provider: string,
    settings: BedrockSettings,
    apiKey: string | undefined,
    private readonly origin: URL,
  ) {
    this.#apiKey = apiKey;
    if (apiKey !== undefined) return;
    // Required here: a configuration without a Bedrock provider loads none of the AWS SDK (decision C13).
    const { Sha256 } = require('@aws-crypto/sha256-js') as typeof import('@aws-crypto/sha256-js');
    const { defaultProvider } = require('@aws-sdk/credential-provider-node') as typeof import('@aws-sdk/credential-provider-node');
    const { SignatureV4: Signer } = require('@smithy/signature-v4') as typeof import('@smithy/signature-v4');
    const credentials = defaultProvider(settings.profile !== undefined ? { profile: settings.profile } : {});
    this.signer = new Signer({ service: 'bedrock', region: settings.region, credentials, sha256: Sha256 });
  }

  get mode(): 'api_key' | 'sigv4' {
    return this.#apiKey !== undefined ? 'api_key' : 'sigv4';
  }

  /** Headers that authorize `method path` with `body` (the JSON text as sent); `path` as sent, already encoded. */
  async headers(method: 'GET' | 'POST', path: string, body: string | undefined): Promise<Record<string, string>> {
    if (this.#apiKey !== undefined) return { authorization: `Bearer ${this.#apiKey}` };
    const headers: Record<string, string> = { host: this.origin.host, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
    let signed: { headers: Record<string, string> };
    try {
      signed = (await this.signer!.sign({ method, protocol: this.origin.protocol, hostname: this.origin.hostname, path, headers, body })) as typeof signed;
    } catch {
      throw new AuthenticationError(`${this.provider}: no AWS credentials could be loaded for signing`, { provider: this.provider });
    }
    // undici sets the host header itself, to the same value.
    const { host: _host, ...rest } = signed.headers;
    return rest;
  }
}
