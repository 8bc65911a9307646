import { InvalidRequestError } from '../../errors';
import type { ChatMessage, ContentPart } from '../ai-provider.interface';
import type { ImageInliner } from '../image-downloads';
import { documentNotSupported, toolArgumentsObject } from '../provider-support';
import { THOUGHT_SIGNATURE_SEPARATOR, type GeminiContent, type GeminiGenerateBody, type GeminiPart } from './gemini-wire';

/**
 * The image types Gemini documents (no GIF, which a downloaded image may be); anything else it answers with a
 * 400 the caller would see as a 502.
 */
export const GEMINI_IMAGE_MEDIA_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif'];

/**
 * System messages become `systemInstruction`; user turns `user` with text and `inlineData` parts; assistant
 * turns `model` with text and `functionCall` parts (`args` an object); consecutive tool messages one `user`
 * turn of `functionResponse` parts, each named after the call it answers (Gemini matches results by name and
 * order, it has no call ids). A call id carrying a thought signature gives it back to its functionCall part.
 * Gemini takes image bytes inline only (fileData is for its own File API): image URLs are downloaded first,
 * all within the image download bounds, once the image details are known to pass.
 */
export async function convertGeminiMessages(
  given: readonly ChatMessage[],
  provider: string,
  images: ImageInliner,
  signal?: AbortSignal,
): Promise<Pick<GeminiGenerateBody, 'contents' | 'systemInstruction'>> {
  checkImageDetails(given, provider);
  const messages = await images.inline(given, signal);
  const invalid = (message: string) => new InvalidRequestError(`${provider}: ${message}`, { provider });
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  for (const [index, message] of messages.entries()) {
    if (message.role === 'system') {
      system.push(message.content);
    } else if (message.role === 'user') {
      contents.push({ role: 'user', parts: userParts(message.content, index, provider) });
    } else if (message.role === 'assistant') {
      const parts: GeminiPart[] = message.content ? [{ text: message.content }] : [];
      for (const [callIndex, call] of (message.toolCalls ?? []).entries()) {
        callNames.set(call.id, call.name);
        const args = toolArgumentsObject(call.arguments, `messages[${index}].tool_calls[${callIndex}].function.arguments`, provider);
        const signature = call.id.split(THOUGHT_SIGNATURE_SEPARATOR)[1];
        parts.push({ functionCall: { name: call.name, args }, ...(signature ? { thoughtSignature: signature } : {}) });
      }
      if (parts.length === 0) throw invalid(`messages[${index}] is an assistant message with neither content nor tool calls`);
      contents.push({ role: 'model', parts });
    } else {
      const name = callNames.get(message.toolCallId);
      if (name === undefined) throw invalid(`messages[${index}].tool_call_id answers no tool call of an earlier assistant message`);
      const part: GeminiPart = { functionResponse: { name, response: toolResponse(message.content, message.isError === true) } };
      // A tool message right after another joins its turn: Gemini wants all results of a call turn in one.
      if (messages[index - 1]?.role === 'tool') contents[contents.length - 1].parts.push(part);
      else contents.push({ role: 'user', parts: [part] });
    }
  }
  if (contents.length === 0) throw invalid('at least one user or assistant message is required');
  return { contents, ...(system.length > 0 ? { systemInstruction: { parts: [{ text: system.join('\n\n') }] } } : {}) };
}

/** Gemini sets image resolution per request (mediaResolution), not per image: only the default passes. */
function checkImageDetails(messages: readonly ChatMessage[], provider: string): void {
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const [partIndex, part] of message.content.entries()) {
      if (part.type === 'image' && part.detail !== undefined && part.detail !== 'auto') {
        throw new InvalidRequestError(`${provider}: messages[${index}].content[${partIndex}].image_url.detail '${part.detail}' is not supported by gemini`, {
          provider,
        });
      }
    }
  }
}

function userParts(content: string | ContentPart[], index: number, provider: string): GeminiPart[] {
  if (typeof content === 'string') return [{ text: content }];
  const parts: GeminiPart[] = [];
  for (const [partIndex, part] of content.entries()) {
    if (part.type === 'text') {
      parts.push({ text: part.text });
      continue;
    }
    if (part.type === 'document') throw documentNotSupported(provider, 'gemini', `messages[${index}].content[${partIndex}]`);
    const image = part.image;
    if (image.kind !== 'base64') {
      // Every URL was downloaded before converting (ImageInliner.inline): one left here is a bug, not dropped.
      throw new InvalidRequestError(`${provider}: messages[${index}].content[${partIndex}].image_url: this URL was not downloaded`, { provider });
    }
    if (!GEMINI_IMAGE_MEDIA_TYPES.includes(image.mediaType)) {
      throw new InvalidRequestError(
        `${provider}: messages[${index}].content[${partIndex}].image_url: gemini takes images of type ${GEMINI_IMAGE_MEDIA_TYPES.join(', ')}, not ${image.mediaType}`,
        { provider },
      );
    }
    parts.push({ inlineData: { mimeType: image.mediaType, data: image.data } });
  }
  if (parts.length === 0) throw new InvalidRequestError(`${provider}: messages[${index}].content is empty`, { provider });
  return parts;
}

/**
 * `response` must be an object: a result that is a JSON object goes as is, anything else as `{content: text}`.
 * A failed tool's result goes under `error`, the key Gemini reads as error details (its `FunctionResponse` docs:
 * "output" for the output, "error" for error details, else the whole response is the output).
 */
function toolResponse(content: string, isError: boolean): Record<string, unknown> {
  const result = jsonObject(content);
  if (isError) return { error: result ?? content };
  return result ?? { content };
}

function jsonObject(content: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(content);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Plain text result.
  }
  return undefined;
}

/**
 * Google's documented placeholder for a function call Gemini did not sign (a call made by another provider, or
 * replayed by a client that dropped the signature): Gemini 3 refuses a call turn whose first functionCall part
 * has no `thoughtSignature` (400), and accepts this value in its place (the thought-signatures guide, FAQ).
 */
export const PLACEHOLDER_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/**
 * Gives the first functionCall part of every model turn whose calls carry no signature the placeholder, in
 * place; a turn with any signature of Gemini's own is left as it is.
 */
export function addPlaceholderThoughtSignatures(contents: readonly GeminiContent[]): void {
  for (const content of contents) {
    if (content.role !== 'model') continue;
    const calls = content.parts.filter((part) => 'functionCall' in part);
    if (calls.length === 0 || calls.some((part) => 'thoughtSignature' in part && part.thoughtSignature)) continue;
    Object.assign(calls[0], { thoughtSignature: PLACEHOLDER_THOUGHT_SIGNATURE });
  }
}
