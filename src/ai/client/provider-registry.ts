/**
 * The registered providers, by name, in registration order (the default fallback order). Each registration
 * is its own adapter instance with its own connection pool, so two of one kind never share state; what they
 * do share is the bounds of image downloads, which hold for the whole process: one image downloader.
 */
import { TollgateError, UnknownProviderError } from '../errors';
import type { AiProvider, ProviderSettings } from '../providers/ai-provider.interface';
import { createImageDownloader, type ImageDownloader, type ImageDownloadLimits } from '../providers/image-downloads';
import { createProvider } from '../providers/provider-factory';

export class ProviderRegistry {
  private readonly providers = new Map<string, AiProvider>();

  constructor(
    providers: Iterable<AiProvider> = [],
    /** Closed with the providers, when the registry made it for them. */
    private readonly images?: ImageDownloader,
  ) {
    for (const provider of providers) this.add(provider);
  }

  static fromSettings(settings: readonly ProviderSettings[], imageLimits: Partial<ImageDownloadLimits> = {}): ProviderRegistry {
    const images = createImageDownloader(imageLimits);
    return new ProviderRegistry(
      settings.map((entry) => createProvider(entry, images)),
      images,
    );
  }

  add(provider: AiProvider): void {
    if (this.providers.has(provider.name)) {
      throw new TollgateError(`provider '${provider.name}' is registered twice; registration names must be unique`);
    }
    this.providers.set(provider.name, provider);
  }

  /** Replaces each registered provider by `wrap(provider)`, under the same name and in the same order. */
  decorate(wrap: (provider: AiProvider) => AiProvider): void {
    for (const [name, provider] of this.providers) this.providers.set(name, wrap(provider));
  }

  has(name: string): boolean {
    return this.providers.has(name);
  }

  get(name: string): AiProvider {
    const provider = this.providers.get(name);
    if (!provider) {
      // The name is the caller's own input, already restricted to a safe alphabet by the API's DTOs.
      throw new UnknownProviderError(`unknown provider '${name}' (registered: ${this.names().join(', ') || 'none'})`);
    }
    return provider;
  }

  names(): string[] {
    return [...this.providers.keys()];
  }

  list(): AiProvider[] {
    return [...this.providers.values()];
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.list().map((provider) => provider.close()), this.images?.close()]);
  }
}
