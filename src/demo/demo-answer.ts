/**
 * What the demo provider answers a Chat Completions request, decided from the request alone so that what the
 * demo advertises is true:
 * - **the prompt** is the last message that is not a system or developer instruction, without what coding CLIs
 *   add in their own tags (CLIENT_CONTEXT): it is what the answer echoes and what names a tool (docs/decisions.md B25).
 * - **tools**: a forced tool (`tool_choice` `required`, or a named function) is called; under `auto` (or no
 *   `tool_choice`) an offered tool is called when the prompt names it in whole words, as written or
 *   as words (`_`, `-` and camelCase humps read as spaces: "use get_weather", "get weather in Paris"), once per
 *   conversation: with a tool result among the messages, `auto` is answered in text, so an agent that repeats
 *   tool names (Claude Code's reminders) is not sent round a loop. The arguments are the smallest value its
 *   parameters schema admits (demo-schema-example.ts). After a tool result the answer is text quoting it.
 * - **structured output**: `response_format` `json_schema` is answered with the smallest value its schema admits,
 *   `json_object` with a JSON object echoing the prompt.
 * - **images**: an image part is described by what can be known without a model: a data URL's media type and
 *   byte size, or a URL's host.
 * Every text answer starts with DEMO_LABEL; JSON answers cannot carry it, their model names the demo instead.
 */
import { schemaExample } from './demo-schema-example';

export const DEMO_LABEL = '[demo]';

export interface DemoToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type DemoAnswer = { kind: 'text'; text: string } | { kind: 'tool_call'; call: DemoToolCall };

interface OfferedTool {
  name: string;
  parameters: unknown;
}

interface ChatMessage {
  role?: unknown;
  content?: unknown;
  tool_call_id?: unknown;
  tool_calls?: unknown;
}

/** The chat answer: labelled, and echoing the last message so a caller sees its request went through. */
export function demoReply(lastMessage: string): string {
  return `${DEMO_LABEL} Tollgate's built-in demo provider answering, not a language model. You said: ${lastMessage}`;
}

/**
 * Instructions a client adds after the prompt (Claude Code's mid-conversation system message, which lists its
 * tools and agents) are not what the caller said: the prompt is the last message of another role.
 */
const INSTRUCTION_ROLES = new Set<unknown>(['system', 'developer']);

export function demoAnswer(body: Record<string, unknown>): DemoAnswer {
  const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
  const last = [...messages].reverse().find((message) => !INSTRUCTION_ROLES.has(message.role));
  if (last?.role === 'tool') return { kind: 'text', text: toolResultReply(last, messages) };
  const prompt = withoutClientContext(textOf(last?.content));
  const tool = chosenTool(offeredTools(body.tools), body.tool_choice, prompt, messages.some((message) => message.role === 'tool'));
  if (tool) return { kind: 'tool_call', call: { id: `call_demo_${messages.length}`, name: tool.name, arguments: JSON.stringify(argumentsFor(tool.parameters)) } };
  const structured = structuredAnswer(body.response_format, prompt);
  if (structured !== undefined) return { kind: 'text', text: structured };
  return { kind: 'text', text: demoReply(prompt + imageNotes(last?.content)) };
}

function offeredTools(tools: unknown): OfferedTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool: { type?: unknown; function?: { name?: unknown; parameters?: unknown } }) =>
    tool?.type === 'function' && typeof tool.function?.name === 'string' ? [{ name: tool.function.name, parameters: tool.function.parameters ?? {} }] : [],
  );
}

function chosenTool(tools: OfferedTool[], choice: unknown, prompt: string, alreadyCalled: boolean): OfferedTool | undefined {
  if (tools.length === 0 || choice === 'none') return undefined;
  if (choice === 'required') return tools[0];
  const named = (choice as { function?: { name?: unknown } } | undefined)?.function?.name;
  if (typeof named === 'string') return tools.find((tool) => tool.name === named);
  if (alreadyCalled) return undefined;
  const words = prompt.toLowerCase();
  return tools.find((tool) => spellingsOf(tool.name).some((spelling) => namesWord(words, spelling)));
}

/** A tool's name as written, and as words: `get_weather`, `get-weather` and `getWeather` are also "get weather". */
function spellingsOf(name: string): string[] {
  return [name, name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ')].map((spelling) => spelling.toLowerCase());
}

/** Whether `text` holds `name` as whole words: "Read" is not asked for by "already". */
function namesWord(text: string, name: string): boolean {
  return new RegExp(`(^|[^a-z0-9_])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^a-z0-9_])`).test(text);
}

/** A tool's arguments are an object even where its schema says nothing (`{}`) or admits something else. */
function argumentsFor(parameters: unknown): unknown {
  const example = schemaExample(parameters);
  return typeof example === 'object' && example !== null && !Array.isArray(example) ? example : {};
}

function toolResultReply(result: ChatMessage, messages: ChatMessage[]): string {
  const calls = messages.flatMap((message) => (Array.isArray(message.tool_calls) ? (message.tool_calls as Array<{ id?: unknown; function?: { name?: unknown } }>) : []));
  const name = calls.find((call) => call.id === result.tool_call_id)?.function?.name;
  return `${DEMO_LABEL} The tool ${typeof name === 'string' ? name : 'you called'} returned: ${textOf(result.content)}`;
}

function structuredAnswer(format: unknown, prompt: string): string | undefined {
  const requested = format as { type?: unknown; json_schema?: { schema?: unknown } } | undefined;
  if (requested?.type === 'json_schema') return JSON.stringify(schemaExample(requested.json_schema?.schema ?? {}));
  if (requested?.type === 'json_object') return JSON.stringify({ demo: true, you_said: prompt });
  return undefined;
}

/**
 * What coding CLIs add to your message, each in its own tags: Claude Code's `<system-reminder>` (attribution
 * rules, notices) and Gemini CLI's `<session_context>` (date, OS, the directory listing).
 */
const CLIENT_CONTEXT = /<(system-reminder|session_context)>[\s\S]*?<\/\1>/g;

function withoutClientContext(text: string): string {
  return text.replace(CLIENT_CONTEXT, '').trim();
}

/** A message's text: the string itself, or its text parts joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part: { type?: unknown; text?: unknown }) => part?.type === 'text' && typeof part.text === 'string')
    .map((part: { text: string }) => part.text)
    .join(' ');
}

function imageNotes(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const images = content.filter((part: { type?: unknown }) => part?.type === 'image_url');
  return images.map((part: { image_url?: { url?: unknown } }) => ` (and an image: ${describeImage(String(part.image_url?.url ?? ''))})`).join('');
}

/** A data URL's media type and decoded size, or a URL's host: all the demo can tell without looking. */
export function describeImage(url: string): string {
  const data = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(url);
  if (data) {
    const bytes = data[2] ? Buffer.from(data[3], 'base64').length : Buffer.byteLength(decodeURIComponent(data[3]));
    return `${data[1] ?? 'unknown type'}, ${bytes} bytes`;
  }
  try {
    return `at ${new URL(url).host}`;
  } catch {
    return 'at an address that is not a URL';
  }
}
