/**
 * OpenAI's `web_search` tool for a model that is not OpenAI's (docs/decisions.md B23): the model is offered a
 * `web_search` function, and when it calls it Tollgate searches through its configured search tool, gives the
 * model the results as the function's output and asks it again, as the bounded agent does. The caller never sees
 * the function: each search is a `web_search_call` output item (`action: {type: "search", query}`), streamed with
 * OpenAI's `response.web_search_call.in_progress`, `.searching` and `.completed` events, and the model's answer
 * follows it.
 *
 * Each model turn is a call of its own through AiClient, so routing, governance and the ledger see every one.
 * The model's turn that calls `web_search` beside the caller's own functions has its searches run and is asked
 * again: its other calls are not returned (the caller could not answer them without the search results the
 * conversation then lacks), and the model makes them again with the results in view.
 */
import type { AiClient, GenerateOptions, GenerateResponse, GenerateStreamEvent } from '../../client/ai-client';
import { toolFailureCategory } from '../../agent/tool-failure-category';
import type { ChatMessage, TokenUsage, ToolCall, ToolCallDelta } from '../../providers/ai-provider.interface';
import type { SearchService } from '../../tools/search.service';
import { messageOutput } from './responses-bodies';
import { itemId, type ResponseItem, type WebSearchCallItem } from './responses-input';
import { WEB_SEARCH_FUNCTION } from './responses-requests';

/** Model turns that may search; the turn after them is asked with `tool_choice: none`, so a response always ends. */
export const MAX_SEARCH_TURNS = 4;

/** One search as the stream shows it: `searching` when it starts, then `completed` or `failed` with its item. */
export interface WebSearchEvent {
  type: 'web_search';
  item: WebSearchCallItem;
}

/** What the Responses surface streams: the domain's events, and the searches Tollgate runs between model turns. */
export type ResponsesStreamEvent = GenerateStreamEvent | WebSearchEvent;

/** The non-streamed answer: the model's last turn, and the items before it (searches, and text of earlier turns). */
export interface SearchedAnswer {
  result: GenerateResponse;
  earlier: ResponseItem[];
}

export class WebSearchTurns {
  /**
   * `sources`: the caller's `include` asked for `web_search_call.action.sources`, so each item names the URLs
   * the search found.
   */
  constructor(
    private readonly client: AiClient,
    private readonly search: SearchService,
    private readonly sources: boolean,
  ) {}

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<SearchedAnswer> {
    const conversation = [...messages];
    const earlier: ResponseItem[] = [];
    let usage: TokenUsage | undefined;
    for (let turn = 0; ; turn++) {
      const result = await this.client.generateMessages(conversation, turnOptions(options, turn));
      usage = addedUsage(usage, result.usage);
      const searches = (result.toolCalls ?? []).filter((call) => call.name === WEB_SEARCH_FUNCTION);
      if (searches.length === 0 || turn === MAX_SEARCH_TURNS) {
        const toolCalls = result.toolCalls?.filter((call) => call.name !== WEB_SEARCH_FUNCTION);
        return { result: { ...result, toolCalls: toolCalls?.length ? toolCalls : undefined, ...(usage ? { usage } : {}) }, earlier };
      }
      if (result.response !== '') earlier.push(messageOutput(itemId('msg'), result.response));
      conversation.push({ role: 'assistant', content: result.response === '' ? null : result.response, toolCalls: searches });
      for (const call of searches) {
        const { item, message } = await this.run(call, itemId('ws'), options.signal);
        earlier.push(item);
        conversation.push(message);
      }
    }
  }

  /**
   * Text streams as it comes; a turn's tool calls are held until its end, when it is known whether the turn
   * searched (the searches run, and the next turn streams) or answered (its calls are passed on, then `done`
   * with the usage of every turn).
   */
  async *stream(messages: readonly ChatMessage[], options: GenerateOptions): AsyncGenerator<ResponsesStreamEvent> {
    const conversation = [...messages];
    let usage: TokenUsage | undefined;
    for (let turn = 0; ; turn++) {
      const calls = new Map<number, ToolCall>();
      let text = '';
      let done: Extract<GenerateStreamEvent, { type: 'done' }> | undefined;
      for await (const event of this.client.streamMessages(conversation, turnOptions(options, turn))) {
        if (event.type === 'done') {
          done = event;
          continue;
        }
        if (event.text !== '') {
          text += event.text;
          yield { type: 'delta', text: event.text };
        }
        for (const delta of event.toolCalls ?? []) collect(calls, delta);
      }
      // The relay yields `done` last or throws, so a finished loop has one.
      usage = addedUsage(usage, done!.usage);
      const made = [...calls.values()];
      const searches = made.filter((call) => call.name === WEB_SEARCH_FUNCTION);
      if (searches.length === 0 || turn === MAX_SEARCH_TURNS) {
        const toolCalls: ToolCallDelta[] = made.filter((call) => call.name !== WEB_SEARCH_FUNCTION).map((call, index) => ({ index, ...call }));
        if (toolCalls.length > 0) yield { type: 'delta', text: '', toolCalls };
        yield { ...done!, ...(usage ? { usage } : {}) };
        return;
      }
      conversation.push({ role: 'assistant', content: text === '' ? null : text, toolCalls: searches });
      for (const call of searches) {
        const id = itemId('ws');
        yield { type: 'web_search', item: { type: 'web_search_call', id, status: 'searching', action: { type: 'search', query: queryOf(call) } } };
        const { item, message } = await this.run(call, id, options.signal);
        yield { type: 'web_search', item };
        conversation.push(message);
      }
    }
  }

  /**
   * One search and what the model reads of it: the results, or the failure's category (never the tool's error
   * text, as for the agent, docs/decisions.md B7). A call without a usable query is a failed search the model is told of.
   */
  private async run(call: ToolCall, id: string, signal: AbortSignal | undefined): Promise<{ item: WebSearchCallItem; message: ChatMessage }> {
    const query = queryOf(call);
    try {
      const found = await this.search.search(query, { signal });
      const results = found.results.map(({ title, url, snippet }) => ({ title, url, snippet }));
      const action = { type: 'search' as const, query, ...(this.sources ? { sources: results.map(({ url }) => ({ type: 'url' as const, url })) } : {}) };
      return {
        item: { type: 'web_search_call', id, status: 'completed', action },
        message: { role: 'tool', toolCallId: call.id, content: JSON.stringify({ query, results }) },
      };
    } catch (error) {
      signal?.throwIfAborted();
      return {
        item: { type: 'web_search_call', id, status: 'failed', action: { type: 'search', query } },
        message: { role: 'tool', toolCallId: call.id, content: JSON.stringify({ query, error: toolFailureCategory(error) }), isError: true },
      };
    }
  }
}

/**
 * The searching turns offer the function as declared. A choice that forces a call (`required`, or the search
 * itself) holds for the first turn only: a search made is a tool call, as OpenAI counts it, and forced again the
 * model could never answer. The last turn may not call any tool, so it answers.
 */
function turnOptions(options: GenerateOptions, turn: number): GenerateOptions {
  if (turn === MAX_SEARCH_TURNS) return { ...options, toolChoice: 'none' };
  const forced = options.toolChoice === 'required' || (typeof options.toolChoice === 'object' && options.toolChoice.name === WEB_SEARCH_FUNCTION);
  return turn > 0 && forced ? { ...options, toolChoice: 'auto' } : options;
}

/** The query the model asked for; arguments that are not `{query: string}` search for nothing, which the search refuses. */
function queryOf(call: ToolCall): string {
  try {
    const args = JSON.parse(call.arguments) as { query?: unknown };
    return typeof args?.query === 'string' ? args.query : '';
  } catch {
    return '';
  }
}

/** A streamed call's pieces joined: its first delta names it, the rest add to its arguments. */
function collect(calls: Map<number, ToolCall>, delta: ToolCallDelta): void {
  const call = calls.get(delta.index);
  if (call) call.arguments += delta.arguments ?? '';
  else calls.set(delta.index, { id: delta.id ?? itemId('fc'), name: delta.name ?? '', arguments: delta.arguments ?? '' });
}

/** The turns' usage added field by field; a field no turn reported stays absent. */
function addedUsage(total: TokenUsage | undefined, usage: TokenUsage | undefined): TokenUsage | undefined {
  if (!usage) return total;
  if (!total) return { ...usage };
  const sum: TokenUsage = { ...total };
  for (const [key, value] of Object.entries(usage) as Array<[keyof TokenUsage, number | undefined]>) {
    if (value !== undefined) sum[key] = (sum[key] ?? 0) + value;
  }
  return sum;
}
