/**
 * Domain messages to Ollama's `/api/chat` messages: text content, images as a base64 `images` list on the
 * message, assistant `tool_calls` with the arguments as an object, tool results as `{role:'tool', content,
 * tool_name}` (Ollama matches a result to its call by name, it has no call ids on the wire).
 */
import { InvalidRequestError } from '../../errors';
import type { ChatMessage } from '../ai-provider.interface';
import { documentNotSupported, toolArgumentsObject } from '../provider-support';

export interface OllamaToolCall {
  function: { name: string; arguments: Record<string, unknown> };
}

export interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  images?: string[];
  tool_calls?: OllamaToolCall[];
  tool_name?: string;
}

export function toOllamaMessages(messages: readonly ChatMessage[], provider: string): OllamaMessage[] {
  return messages.map((message, index) => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content };
      case 'user':
        return userMessage(message.content, index, provider);
      case 'assistant': {
        const converted: OllamaMessage = { role: 'assistant', content: message.content ?? '' };
        if (message.toolCalls?.length) {
          converted.tool_calls = message.toolCalls.map((call, callIndex) => ({
            function: { name: call.name, arguments: toolArgumentsObject(call.arguments, `messages[${index}].tool_calls[${callIndex}].function.arguments`, provider) },
          }));
        }
        return converted;
      }
      case 'tool':
        return { role: 'tool', content: message.content, tool_name: toolNameFor(messages, index, provider) };
    }
  });
}

function userMessage(content: Extract<ChatMessage, { role: 'user' }>['content'], index: number, provider: string): OllamaMessage {
  if (typeof content === 'string') return { role: 'user', content };
  const text: string[] = [];
  const images: string[] = [];
  content.forEach((part, partIndex) => {
    if (part.type === 'text') {
      text.push(part.text);
    } else if (part.type === 'document') {
      throw documentNotSupported(provider, 'ollama', `messages[${index}].content[${partIndex}]`);
    } else if (part.detail !== undefined && part.detail !== 'auto') {
      // Ollama has no per-image resolution setting: only the default passes, never silently dropped.
      throw new InvalidRequestError(`${provider}: messages[${index}].content[${partIndex}].image_url.detail '${part.detail}' is not supported by ollama`, {
        provider,
      });
    } else if (part.image.kind === 'base64') {
      images.push(part.image.data);
    } else {
      // The adapter fetched every URL before converting (ImageInliner.inline): one left here is a bug, not dropped.
      throw new InvalidRequestError(
        `${provider}: messages[${index}].content[${partIndex}].image_url: Ollama accepts image bytes only, and this URL was not fetched`,
        { provider },
      );
    }
  });
  return images.length > 0 ? { role: 'user', content: text.join(''), images } : { role: 'user', content: text.join('') };
}

/** The name of the call a tool result answers: the nearest earlier assistant call with that id. */
function toolNameFor(messages: readonly ChatMessage[], index: number, provider: string): string {
  const message = messages[index] as Extract<ChatMessage, { role: 'tool' }>;
  for (let i = index - 1; i >= 0; i--) {
    const candidate = messages[i];
    if (candidate.role !== 'assistant') continue;
    const call = candidate.toolCalls?.find((c) => c.id === message.toolCallId);
    if (call) return call.name;
  }
  throw new InvalidRequestError(
    `${provider}: messages[${index}].tool_call_id '${message.toolCallId}' matches no earlier assistant tool call`,
    { provider },
  );
}
