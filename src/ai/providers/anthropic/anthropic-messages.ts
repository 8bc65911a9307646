/**
 * Tollgate messages -> Messages API turns: system messages go to the top-level `system`, assistant tool calls
 * become `tool_use` blocks (input is an object, parsed from the arguments text), and consecutive tool messages
 * become ONE user turn of `tool_result` blocks, as the API requires results to follow their `tool_use` turn.
 */
import { InvalidRequestError } from '../../errors';
import type { ChatMessage, ContentPart } from '../ai-provider.interface';
import { toolArgumentsObject } from '../provider-support';

export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string };

export type AnthropicContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: AnthropicImageSource }
  | { type: 'document'; source: { type: 'base64'; media_type: string; data: string }; title?: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: true };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicContentBlock[];
}

export interface AnthropicConversation {
  system?: string;
  messages: AnthropicMessage[];
}

/** The image types the Messages API documents; anything else it answers with a 400 the caller would see as a 502. */
export const ANTHROPIC_IMAGE_MEDIA_TYPES: readonly string[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/** `at` names the part in the caller's request, e.g. `messages[0].content[1]`. */
function imageBlock(part: Extract<ContentPart, { type: 'image' }>, at: string, provider: string): AnthropicContentBlock {
  // Anthropic has no per-image resolution setting: only the default passes, never silently dropped.
  if (part.detail !== undefined && part.detail !== 'auto') {
    throw new InvalidRequestError(`${provider}: ${at}.image_url.detail '${part.detail}' is not supported by anthropic`, { provider });
  }
  const image = part.image;
  if (image.kind === 'url') return { type: 'image', source: { type: 'url', url: image.url } };
  if (!ANTHROPIC_IMAGE_MEDIA_TYPES.includes(image.mediaType)) {
    throw new InvalidRequestError(`${provider}: ${at}.image_url: anthropic takes images of type ${ANTHROPIC_IMAGE_MEDIA_TYPES.join(', ')}, not ${image.mediaType}`, {
      provider,
    });
  }
  return { type: 'image', source: { type: 'base64', media_type: image.mediaType, data: image.data } };
}

function userContent(content: string | ContentPart[], index: number, provider: string): string | AnthropicContentBlock[] {
  if (typeof content === 'string') return content;
  return content.map((part, partIndex): AnthropicContentBlock => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'document') {
      const { mediaType, data, name } = part.document;
      return { type: 'document', source: { type: 'base64', media_type: mediaType, data }, ...(name !== undefined ? { title: name } : {}) };
    }
    return imageBlock(part, `messages[${index}].content[${partIndex}]`, provider);
  });
}

function assistantContent(message: Extract<ChatMessage, { role: 'assistant' }>, index: number, provider: string): string | AnthropicContentBlock[] {
  const calls = message.toolCalls ?? [];
  if (calls.length === 0) return message.content ?? '';
  const blocks: AnthropicContentBlock[] = [];
  // The API refuses empty text blocks, so a null or empty content adds none.
  if (message.content) blocks.push({ type: 'text', text: message.content });
  calls.forEach((call, callIndex) => {
    const input = toolArgumentsObject(call.arguments, `messages[${index}].tool_calls[${callIndex}].function.arguments`, provider);
    blocks.push({ type: 'tool_use', id: call.id, name: call.name, input });
  });
  return blocks;
}

export function toAnthropicConversation(messages: readonly ChatMessage[], provider: string): AnthropicConversation {
  const system: string[] = [];
  const turns: AnthropicMessage[] = [];
  let toolResults: AnthropicContentBlock[] | undefined;
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      const block: AnthropicContentBlock = {
        type: 'tool_result',
        tool_use_id: message.toolCallId,
        content: message.content,
        ...(message.isError ? { is_error: true as const } : {}),
      };
      if (toolResults) {
        toolResults.push(block);
      } else {
        toolResults = [block];
        turns.push({ role: 'user', content: toolResults });
      }
      return;
    }
    toolResults = undefined;
    if (message.role === 'system') system.push(message.content);
    else if (message.role === 'user') turns.push({ role: 'user', content: userContent(message.content, index, provider) });
    else turns.push({ role: 'assistant', content: assistantContent(message, index, provider) });
  });
  if (turns.length === 0) {
    throw new InvalidRequestError(`${provider}: at least one user or assistant message is required`, { provider });
  }
  return { ...(system.length > 0 ? { system: system.join('\n\n') } : {}), messages: turns };
}
