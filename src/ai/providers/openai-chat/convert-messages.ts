/** Domain chat messages in the OpenAI chat-completions shape (tool results, assistant tool calls, image_url parts). */
import { CapabilityNotSupportedError } from '../../errors';
import type { ChatMessage, ContentPart } from '../ai-provider.interface';

export type OpenAiContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } };

export type OpenAiMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAiContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAiToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export function toOpenAiMessages(messages: readonly ChatMessage[]): OpenAiMessage[] {
  return messages.map((message, index): OpenAiMessage => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content };
      case 'user':
        return {
          role: 'user',
          content: typeof message.content === 'string' ? message.content : message.content.map((part, p) => toOpenAiPart(part, `messages[${index}].content[${p}]`)),
        };
      case 'assistant':
        return {
          role: 'assistant',
          content: message.content,
          ...(message.toolCalls?.length
            ? {
                tool_calls: message.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function' as const,
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        };
      case 'tool':
        return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    }
  });
}

/** A base64 image travels as a data: URL, the only inline form the chat-completions format has. */
function toOpenAiPart(part: ContentPart, at: string): OpenAiContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  // The call gate refuses documents to these kinds first (call-features.ts); never dropped silently.
  if (part.type === 'document') throw new CapabilityNotSupportedError(`${at}: document input is not supported by the chat-completions kinds`);
  const url = part.image.kind === 'url' ? part.image.url : `data:${part.image.mediaType};base64,${part.image.data}`;
  return { type: 'image_url', image_url: { url, ...(part.detail ? { detail: part.detail } : {}) } };
}

/** Whether any message carries an image part (vision is decided per model family). */
export function hasImagePart(messages: readonly ChatMessage[]): boolean {
  return messages.some((m) => m.role === 'user' && typeof m.content !== 'string' && m.content.some((p) => p.type === 'image'));
}
