import type { TollgateError } from '../../src/ai/errors';
import type { AiProvider, ChatMessage, ContentPart } from '../../src/ai/providers/ai-provider.interface';
import type { ImageInliner } from '../../src/ai/providers/image-downloads';
import type { FetchedImage } from '../../src/ai/providers/image-fetch';

/**
 * Awaits `call`, expects it to reject with `type`, and proves the message carries none of `secrets` (the
 * emulator's body marker, the API key) nor the emulator's loopback address: no upstream detail reaches a caller.
 */
export async function expectSanitized<T extends TollgateError>(
  call: Promise<unknown>,
  type: abstract new (...args: never[]) => T,
  secrets: string[],
): Promise<T> {
  const error = await call.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  const message = (error as Error).message;
  for (const secret of [...secrets, '127.0.0.1']) expect(message).not.toContain(secret);
  return error as T;
}

/** Reads a stream to its end, so a test can assert on all it yielded or on how it failed. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Remembers the providers a test builds, so that `afterEach` can close their connection pools. */
export function trackedProviders<P extends AiProvider>() {
  const open: P[] = [];
  return {
    track(provider: P): P {
      open.push(provider);
      return provider;
    },
    closeAll: () => Promise.all(open.splice(0).map((provider) => provider.close())),
  };
}

/** An image inliner answering each URL with `fetchImage`, for adapter specs about what is sent, not how it is downloaded. */
export function imageInlinerOf(fetchImage: (url: string) => Promise<FetchedImage>): ImageInliner {
  const inlinePart = async (part: ContentPart): Promise<ContentPart> =>
    part.type === 'image' && part.image.kind === 'url' ? { ...part, image: { kind: 'base64', ...(await fetchImage(part.image.url)) } } : part;
  return {
    inline: (messages) =>
      Promise.all(
        messages.map(async (message): Promise<ChatMessage> =>
          message.role === 'user' && typeof message.content !== 'string' ? { role: 'user', content: await Promise.all(message.content.map(inlinePart)) } : message,
        ),
      ),
  };
}
