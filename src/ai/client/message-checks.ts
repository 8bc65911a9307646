/**
 * The shape of the messages a caller hands the client, checked before any routing: each problem names the
 * message and field (`messages[2].content[0].image.url must be an http(s) URL`), a 400 on every surface.
 */
import { InvalidRequestError } from '../errors';
import type { ChatMessage } from '../providers/ai-provider.interface';

export function checkMessages(messages: unknown): asserts messages is ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidRequestError('messages must be a non-empty array');
  messages.forEach((message: unknown, index) => {
    if (!message || typeof message !== 'object') throw new InvalidRequestError(`messages[${index}] must be an object`);
    const problem = messageProblem(message as Record<string, unknown>);
    if (problem !== undefined) throw new InvalidRequestError(`messages[${index}]${problem}`);
  });
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** What is wrong with one message, as a path suffix and a phrase (`.content must be a string`). */
function messageProblem(message: Record<string, unknown>): string | undefined {
  const { role, content } = message;
  switch (role) {
    case 'system':
      return typeof content === 'string' ? undefined : '.content must be a string';
    case 'user':
      if (typeof content === 'string') return undefined;
      if (!Array.isArray(content) || content.length === 0) return '.content must be a string or a non-empty array of parts';
      for (const [index, part] of content.entries()) {
        const problem = partProblem(part);
        if (problem !== undefined) return `.content[${index}]${problem}`;
      }
      return undefined;
    case 'assistant': {
      const calls = message.toolCalls;
      if (calls !== undefined) {
        if (!Array.isArray(calls)) return '.toolCalls must be an array';
        for (const [index, call] of calls.entries()) {
          const { id, name, arguments: args } = (call ?? {}) as Record<string, unknown>;
          if (!nonEmptyString(id) || !nonEmptyString(name) || typeof args !== 'string') {
            return `.toolCalls[${index}] must have a non-empty id and name and arguments as JSON text`;
          }
        }
      }
      if (typeof content === 'string') return undefined;
      return content === null && Array.isArray(calls) && calls.length > 0 ? undefined : '.content must be a string (null only beside toolCalls)';
    }
    case 'tool':
      if (!nonEmptyString(message.toolCallId)) return '.toolCallId must name the tool call this message answers';
      return typeof content === 'string' ? undefined : '.content must be a string';
    default:
      return '.role must be one of system, user, assistant, tool';
  }
}

function partProblem(part: unknown): string | undefined {
  const { type, text, image, document } = (part ?? {}) as Record<string, unknown>;
  if (type === 'text') return typeof text === 'string' ? undefined : '.text must be a string';
  if (type === 'document') return documentProblem(document);
  if (type !== 'image') return '.type must be text, image or document';
  const source = (image ?? {}) as Record<string, unknown>;
  if (source.kind === 'url') {
    return typeof source.url === 'string' && /^https?:\/\//i.test(source.url) ? undefined : '.image.url must be an http(s) URL';
  }
  if (source.kind === 'base64') {
    if (typeof source.mediaType !== 'string' || !/^image\/[\w.+-]+$/.test(source.mediaType)) return '.image.mediaType must be an image/* type';
    return nonEmptyString(source.data) ? undefined : '.image.data must be non-empty base64 text';
  }
  return ".image.kind must be 'url' or 'base64'";
}

function documentProblem(document: unknown): string | undefined {
  const { mediaType, data, name } = (document ?? {}) as Record<string, unknown>;
  if (typeof mediaType !== 'string' || !/^(application|text)\/[\w.+-]+$/.test(mediaType)) return '.document.mediaType must be an application/* or text/* type';
  if (name !== undefined && typeof name !== 'string') return '.document.name must be a string';
  return nonEmptyString(data) ? undefined : '.document.data must be non-empty base64 text';
}
