/**
 * The bounded downloads of the images a request gives by URL, for the adapters whose provider takes image
 * bytes only (Ollama, Gemini). Image URLs are caller input pointing anywhere, so every download is bounded
 * the same way (`ai.images`): how many a request may give, how many run at once for one request and for the
 * whole process, how many bytes one image and all images of a request may bring, and one deadline per
 * download. A request's downloads form one set with its own AbortController: they all end when the first of
 * them fails, when the caller goes away, and in any case before the set's answer, so no download outlives its
 * request. One guarded undici Agent serves every download of the process (a fresh one after ORIGINS_PER_AGENT
 * origins), keeping no idle socket.
 */
import type { LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import { InvalidRequestError } from '../errors';
import type { ChatMessage, ContentPart } from './ai-provider.interface';
import { createImageAgent, DEFAULT_MAX_IMAGE_BYTES, type FetchedImage, fetchImageAsBase64, ImageDownloadStop } from './image-fetch';

/** Bounds of image downloads (the `ai.images` section, in milliseconds). */
export interface ImageDownloadLimits {
  /** Image URLs one request may give; more are refused before anything is downloaded. */
  maxPerRequest: number;
  /** Downloads of one request running at once. */
  maxConcurrentPerRequest: number;
  /** Downloads of the whole process running at once; a download waits for a free slot while its request lasts. */
  maxConcurrent: number;
  /** Bytes of one image. */
  maxBytes: number;
  /** Bytes of all images one request downloads, together. */
  maxTotalBytes: number;
  /** One download's deadline, from its connect to its last byte. */
  timeoutMs: number;
}

/**
 * 16 images like the agent's `images` field; 20 MiB per image (OpenAI's own cap) and per request (the chat
 * body limit, so a URL brings no more than the caller could have sent inline).
 */
export const DEFAULT_IMAGE_DOWNLOAD_LIMITS: Readonly<ImageDownloadLimits> = Object.freeze({
  maxPerRequest: 16,
  maxConcurrentPerRequest: 4,
  maxConcurrent: 32,
  maxBytes: DEFAULT_MAX_IMAGE_BYTES,
  maxTotalBytes: 20 * 1024 * 1024,
  timeoutMs: 10_000,
});

/** What an adapter needs: the messages with every image URL replaced by its bytes. */
export interface ImageInliner {
  inline(messages: readonly ChatMessage[], signal?: AbortSignal): Promise<ChatMessage[]>;
}

export interface ImageDownloaderOptions {
  /** The URL guard's private-network switch (tests, and never a caller's choice). */
  allowPrivateNetwork?: boolean;
  /** The guard's DNS step; tests answer a test host name with a loopback server. */
  lookup?: LookupFunction;
  /** Distinct origins one agent serves (default ORIGINS_PER_AGENT). */
  originsPerAgent?: number;
}

/**
 * undici 6's Agent keeps a client object for every origin it ever served, and callers choose the origins: an
 * agent serves this many distinct origins, then a fresh one takes over and the old one closes once its
 * downloads end.
 */
export const ORIGINS_PER_AGENT = 1024;

/** One per process (the provider registry's): the shared agent and the process-wide download slots. */
export class ImageDownloader implements ImageInliner {
  readonly limits: Readonly<ImageDownloadLimits>;
  private readonly slots: DownloadSlots;
  private agent: Agent | undefined;
  private readonly origins = new Set<string>();
  private readonly retired = new Set<Agent>();

  constructor(
    limits: Partial<ImageDownloadLimits> = {},
    private readonly options: ImageDownloaderOptions = {},
  ) {
    this.limits = Object.freeze({ ...DEFAULT_IMAGE_DOWNLOAD_LIMITS, ...limits });
    this.slots = new DownloadSlots(this.limits.maxConcurrent);
  }

  async inline(messages: readonly ChatMessage[], signal?: AbortSignal): Promise<ChatMessage[]> {
    const urls = messages.flatMap((message) => (message.role === 'user' && typeof message.content !== 'string' ? message.content.flatMap(imageUrlOf) : []));
    if (urls.length === 0) return [...messages];
    if (urls.length > this.limits.maxPerRequest) {
      throw new InvalidRequestError(
        `the request gives ${urls.length} image URLs; at most ${this.limits.maxPerRequest} are downloaded per request (ai.images.max_per_request)`,
      );
    }
    const images = await new RequestDownloads(this, signal).run(urls);
    let next = 0;
    return messages.map((message): ChatMessage => {
      if (message.role !== 'user' || typeof message.content === 'string') return message;
      if (!message.content.some((part) => imageUrlOf(part).length > 0)) return message;
      const content = message.content.map((part): ContentPart => {
        if (part.type !== 'image' || part.image.kind !== 'url') return part;
        const { mediaType, data } = images[next++];
        return { ...part, image: { kind: 'base64', mediaType, data } };
      });
      return { role: 'user', content };
    });
  }

  /** One download of a request's set, in a process-wide slot, under its own deadline; `takeBytes` is the set's byte allowance. */
  async download(url: string, signal: AbortSignal, takeBytes: (bytes: number) => string | undefined): Promise<FetchedImage> {
    const release = await this.slots.acquire(signal);
    const own = new AbortController();
    const stop = () => own.abort(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    const seconds = this.limits.timeoutMs / 1000;
    const deadline = setTimeout(() => own.abort(new ImageDownloadStop(`did not download within ${seconds} s (ai.images.timeout)`)), this.limits.timeoutMs);
    try {
      return await fetchImageAsBase64(url, {
        dispatcherFor: (target) => this.agentFor(target),
        maxBytes: this.limits.maxBytes,
        signal: own.signal,
        allowPrivateNetwork: this.options.allowPrivateNetwork,
        takeBytes,
      });
    } finally {
      clearTimeout(deadline);
      signal.removeEventListener('abort', stop);
      release();
    }
  }

  /** Ends every download still running and releases the agents' sockets. */
  async close(): Promise<void> {
    const agents = [...this.retired, ...(this.agent ? [this.agent] : [])];
    this.agent = undefined;
    this.retired.clear();
    await Promise.all(agents.map((agent) => agent.destroy().catch(() => undefined)));
  }

  private agentFor(url: URL): Agent {
    const originsPerAgent = this.options.originsPerAgent ?? ORIGINS_PER_AGENT;
    if (this.agent && !this.origins.has(url.origin) && this.origins.size >= originsPerAgent) this.retire(this.agent);
    this.agent ??= createImageAgent({ timeoutMs: this.limits.timeoutMs, allowPrivateNetwork: this.options.allowPrivateNetwork, lookup: this.options.lookup });
    this.origins.add(url.origin);
    return this.agent;
  }

  private retire(agent: Agent): void {
    this.agent = undefined;
    this.origins.clear();
    this.retired.add(agent);
    void agent
      .close()
      .catch(() => undefined)
      .finally(() => this.retired.delete(agent));
  }
}

/** The downloads of one request: at most maxConcurrentPerRequest at once, ended together. */
class RequestDownloads {
  private readonly controller = new AbortController();
  private failure: unknown;
  private received = 0;

  constructor(
    private readonly downloader: ImageDownloader,
    private readonly callerSignal: AbortSignal | undefined,
  ) {}

  /** The images in URL order; the first failure, once every download has ended. */
  async run(urls: readonly string[]): Promise<FetchedImage[]> {
    const images: FetchedImage[] = [];
    const { maxConcurrentPerRequest } = this.downloader.limits;
    let next = 0;
    const work = async () => {
      while (!this.controller.signal.aborted && next < urls.length) {
        const index = next++;
        try {
          images[index] = await this.downloader.download(urls[index], this.controller.signal, this.takeBytes);
        } catch (error) {
          this.fail(error);
        }
      }
    };
    const callerLeft = () => this.fail(new InvalidRequestError('image downloads stopped: the request was cancelled'));
    if (this.callerSignal?.aborted) callerLeft();
    this.callerSignal?.addEventListener('abort', callerLeft, { once: true });
    try {
      await Promise.all(Array.from({ length: Math.min(maxConcurrentPerRequest, urls.length) }, work));
    } finally {
      this.callerSignal?.removeEventListener('abort', callerLeft);
    }
    if (this.failure !== undefined) throw this.failure;
    return images;
  }

  /** The first failure is the answer; it stops every other download of the request. */
  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.controller.abort(new ImageDownloadStop('download stopped: another image of the request failed'));
  }

  private readonly takeBytes = (bytes: number): string | undefined => {
    this.received += bytes;
    const { maxTotalBytes } = this.downloader.limits;
    if (this.received <= maxTotalBytes) return undefined;
    return `brings the request's images past ${maxTotalBytes} bytes together (ai.images.max_total_bytes)`;
  };
}

/** Process-wide download slots, handed out in arrival order. */
class DownloadSlots {
  private taken = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /** Resolves with the slot's release once one is free; rejects when `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.taken < this.size) {
      this.taken++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener('abort', abandon);
        resolve(this.releaser());
      };
      const abandon = () => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        reject(signal.reason);
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', abandon, { once: true });
    });
  }

  /** Hands the slot to the next waiter, else frees it; a second call does nothing. */
  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.taken--;
    };
  }
}

/** The process's downloader; a seam, so a suite can answer its test host name with a loopback server. */
export function createImageDownloader(limits: Partial<ImageDownloadLimits>): ImageDownloader {
  return new ImageDownloader(limits);
}

function imageUrlOf(part: ContentPart): string[] {
  return part.type === 'image' && part.image.kind === 'url' ? [part.image.url] : [];
}
