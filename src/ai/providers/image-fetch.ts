/**
 * Downloads an image a caller gave by URL, for providers whose API takes image bytes only (inline base64).
 * The URL is caller input, so the fetch follows the tool URL guard (tool-url-guard.ts): http(s) only, no
 * credentials, no loopback/private/link-local address literal, and a DNS step that refuses names resolving
 * to such addresses; every redirect hop is checked again. The body is capped while it streams, whatever
 * Content-Length says. Errors are InvalidRequestError naming the URL's host only (the path and query may
 * carry secrets) and never the remote body. How many downloads run, for how long and how many bytes a request
 * may bring is image-downloads.ts's business: one download here, on the dispatcher it is given.
 */
import type { LookupFunction } from 'node:net';
import { Agent, type Dispatcher, errors as undiciErrors, request } from 'undici';
import { InvalidRequestError } from '../errors';
import { BLOCKED_ADDRESS_CODE, isLocalhostName, isNonPublicAddress, publicOnlyLookup } from '../tools/tool-url-guard';

/** Default cap on one downloaded image (OpenAI's own per-image limit). */
export const DEFAULT_MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** The image types every vision provider we translate to accepts. */
export const SUPPORTED_IMAGE_MEDIA_TYPES: readonly string[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/** Hops followed before giving up; each is checked by the guard like the first URL. */
export const MAX_IMAGE_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface ImageAgentOptions {
  /** Bounds the connect, the wait for the headers and every gap in the body, each on its own. */
  timeoutMs: number;
  /** The guard's private-network switch: true lets the URL reach loopback and private addresses. */
  allowPrivateNetwork?: boolean;
  /** DNS step of the guard when private addresses are refused; defaults to publicOnlyLookup (tests point a name at a local server). */
  lookup?: LookupFunction;
}

/**
 * The guarded dispatcher of image downloads: the guard's DNS step on every connect, and undici's own timers on.
 * No socket is kept idle: downloads send `reset`, and undici 6 reconnects once after a request aborted
 * mid-body, a socket that would otherwise wait 4 s (keepAliveTimeout) for a request that never comes.
 */
export function createImageAgent(options: ImageAgentOptions): Agent {
  const lookup = options.allowPrivateNetwork ? {} : { lookup: options.lookup ?? (publicOnlyLookup as LookupFunction) };
  return new Agent({
    connect: { timeout: options.timeoutMs, ...lookup },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 1,
    keepAliveMaxTimeout: 1,
  });
}

/** Why a download's signal stopped it, as its refusal says it (its deadline passed, say); any other reason is a cancellation. */
export class ImageDownloadStop extends Error {}

export interface ImageFetchOptions {
  /** The dispatcher for a hop's URL (a guarded agent from createImageAgent). */
  dispatcherFor: (url: URL) => Dispatcher;
  maxBytes: number;
  /** Aborts the download; an ImageDownloadStop reason gives the refusal its words. */
  signal?: AbortSignal;
  /** Must match the agent's: true lets the URL name loopback and private addresses. */
  allowPrivateNetwork?: boolean;
  /** Takes streamed bytes from an allowance shared with other downloads; answers why not when it is spent. */
  takeBytes?: (bytes: number) => string | undefined;
}

export interface FetchedImage {
  mediaType: string;
  /** The image bytes, base64-encoded. */
  data: string;
}

export async function fetchImageAsBase64(url: string, options: ImageFetchOptions): Promise<FetchedImage> {
  let current = parseImageUrl(url);
  for (let hop = 0; ; hop++) {
    checkImageHost(current, options.allowPrivateNetwork === true);
    const response = await send(current, options.dispatcherFor(current), options.signal);
    if (REDIRECT_STATUSES.has(response.statusCode)) {
      await response.body.dump().catch(() => undefined);
      const location = response.headers.location;
      if (typeof location !== 'string' || hop >= MAX_IMAGE_REDIRECTS) {
        throw new InvalidRequestError(`image at ${current.host}: redirects ${typeof location === 'string' ? `more than ${MAX_IMAGE_REDIRECTS} times` : 'without a Location'}`);
      }
      current = parseImageUrl(location, current);
      continue;
    }
    return await readImage(current, response, options);
  }
}

type ImageResponse = Awaited<ReturnType<typeof request>>;

function parseImageUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new InvalidRequestError(base ? `image at ${base.host}: redirects to an invalid URL` : 'image URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidRequestError(base ? `image at ${base.host}: redirects to a non-http(s) URL` : 'image URL must be an http:// or https:// URL (or a data: URL)');
  }
  if (url.username !== '' || url.password !== '') throw new InvalidRequestError(`image URL for ${url.host}: must not contain credentials`);
  return url;
}

function checkImageHost(url: URL, allowPrivateNetwork: boolean): void {
  if (allowPrivateNetwork) return;
  if (isLocalhostName(url.hostname) || isNonPublicAddress(url.hostname)) {
    throw new InvalidRequestError(`image at ${url.host}: is a loopback, private or link-local address`);
  }
}

/** `reset`: the connection closes after the answer, so no idle socket to a caller's host outlives its download. */
async function send(url: URL, dispatcher: Dispatcher, signal: AbortSignal | undefined): Promise<ImageResponse> {
  try {
    return await request(url, { method: 'GET', dispatcher, signal, reset: true, headers: { accept: SUPPORTED_IMAGE_MEDIA_TYPES.join(', ') } });
  } catch (error) {
    throw transportError(url, error, signal);
  }
}

async function readImage(url: URL, response: ImageResponse, options: ImageFetchOptions): Promise<FetchedImage> {
  // Destroying the body to stop a refused download emits an abort error nobody else listens for.
  response.body.on('error', () => undefined);
  const refuse = (reason: string) => {
    response.body.destroy();
    return new InvalidRequestError(`image at ${url.host}: ${reason}`);
  };
  if (response.statusCode < 200 || response.statusCode >= 300) throw refuse(`answered HTTP ${response.statusCode}`);
  const mediaType = mediaTypeOf(response.headers['content-type']);
  if (!mediaType || !SUPPORTED_IMAGE_MEDIA_TYPES.includes(mediaType)) {
    throw refuse(`is not an image of type ${SUPPORTED_IMAGE_MEDIA_TYPES.join(', ')} (Content-Type ${mediaType ?? 'missing or invalid'})`);
  }
  const declared = Number(response.headers['content-length']);
  const tooLarge = `is larger than ${options.maxBytes} bytes (ai.images.max_bytes)`;
  if (Number.isFinite(declared) && declared > options.maxBytes) throw refuse(tooLarge);
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of response.body) {
      received += (chunk as Buffer).length;
      if (received > options.maxBytes) throw refuse(tooLarge);
      const spent = options.takeBytes?.((chunk as Buffer).length);
      if (spent !== undefined) throw refuse(spent);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (error instanceof InvalidRequestError) throw error;
    throw transportError(url, error, options.signal);
  }
  return { mediaType, data: Buffer.concat(chunks, received).toString('base64') };
}

/** The bare type of a Content-Type header, lower-cased; undefined unless it is a plain `type/subtype` token (so it is safe to echo). */
function mediaTypeOf(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.split(';')[0].trim().toLowerCase();
  return value && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(value) ? value : undefined;
}

function transportError(url: URL, error: unknown, signal: AbortSignal | undefined): InvalidRequestError {
  if (signal?.aborted || error instanceof undiciErrors.RequestAbortedError) {
    const reason = signal?.reason instanceof ImageDownloadStop ? signal.reason.message : 'download was cancelled';
    return new InvalidRequestError(`image at ${url.host}: ${reason}`, { cause: error });
  }
  if (isUndiciTimeout(error)) return new InvalidRequestError(`image at ${url.host}: download did not finish in time`, { cause: error });
  if (hasCode(error, BLOCKED_ADDRESS_CODE)) {
    return new InvalidRequestError(`image at ${url.host}: resolves to a loopback, private or link-local address`, { cause: error });
  }
  return new InvalidRequestError(`image at ${url.host}: could not be downloaded`, { cause: error });
}

function hasCode(error: unknown, code: string): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if ((current as NodeJS.ErrnoException).code === code) return true;
    if (current instanceof AggregateError && current.errors.some((inner) => hasCode(inner, code))) return true;
  }
  return false;
}

function isUndiciTimeout(error: unknown): boolean {
  return (
    error instanceof undiciErrors.ConnectTimeoutError || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError
  );
}
