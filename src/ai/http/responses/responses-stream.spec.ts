import { responseHeader } from './responses-bodies';
import { callNames, type ResponsesRequest } from './responses-requests';
import { ResponsesStream } from './responses-stream';
import type { ResponsesStreamEvent } from './responses-web-search';

/** The frames of one stream as parsed events. */
function eventsOf(events: ResponsesStreamEvent[], tools?: ResponsesRequest['tools']): Array<Record<string, any>> {
  const stream = new ResponsesStream(responseHeader({ model: 'm', input: 'hi', tools }, 'openai/m'), callNames(tools));
  let text = stream.opening();
  for (const event of events) text += stream.render(event);
  return text
    .trim()
    .split('\n\n')
    .map((frame) => {
      const [name, data] = frame.split('\n');
      const body = JSON.parse(data.slice('data: '.length));
      expect(name).toBe(`event: ${body.type}`);
      return body;
    });
}

describe('ResponsesStream', () => {
  it('a search between the model turns closes the text before it and is one web_search_call item; the answer after it a new message', () => {
    const search = { type: 'web_search_call' as const, id: 'ws_1', action: { type: 'search' as const, query: 'paris weather' } };
    const events = eventsOf([
      { type: 'delta', text: 'Searching.' },
      { type: 'web_search', item: { ...search, status: 'searching' } },
      { type: 'web_search', item: { ...search, status: 'completed' } },
      { type: 'delta', text: 'Sunny.' },
      { type: 'done', provider: 'anthropic', model: 'm', finishReason: 'stop' },
    ]);
    expect(events.slice(2).map((event) => `${event.type}:${event.output_index ?? ''}`)).toEqual([
      'response.output_item.added:0',
      'response.content_part.added:0',
      'response.output_text.delta:0',
      'response.output_text.done:0',
      'response.content_part.done:0',
      'response.output_item.done:0',
      'response.output_item.added:1',
      'response.web_search_call.in_progress:1',
      'response.web_search_call.searching:1',
      'response.web_search_call.completed:1',
      'response.output_item.done:1',
      'response.output_item.added:2',
      'response.content_part.added:2',
      'response.output_text.delta:2',
      'response.output_text.done:2',
      'response.content_part.done:2',
      'response.output_item.done:2',
      'response.completed:',
    ]);
    expect(events[8]).toMatchObject({ item: { type: 'web_search_call', id: 'ws_1', status: 'in_progress', action: { query: 'paris weather' } } });
    expect(events.at(-1)!.response.output.map((item: { type: string; status: string }) => `${item.type}:${item.status}`)).toEqual([
      'message:completed',
      'web_search_call:completed',
      'message:completed',
    ]);
  });

  it('a failed search has no .completed event; its item says failed', () => {
    const search = { type: 'web_search_call' as const, id: 'ws_2', action: { type: 'search' as const, query: 'q' } };
    const events = eventsOf([
      { type: 'web_search', item: { ...search, status: 'searching' } },
      { type: 'web_search', item: { ...search, status: 'failed' } },
      { type: 'delta', text: 'No luck.' },
      { type: 'done', provider: 'anthropic', model: 'm', finishReason: 'stop' },
    ]);
    expect(events.map((event) => event.type)).not.toContain('response.web_search_call.completed');
    expect(events.find((event) => event.type === 'response.output_item.done')).toMatchObject({ output_index: 0, item: { status: 'failed' } });
  });

  it("writes text then interleaved calls in OpenAI's order, numbered from 0, each item closed before the end", () => {
    const events = eventsOf([
      { type: 'delta', text: 'Let me ' },
      { type: 'delta', text: 'check.' },
      { type: 'delta', text: '', toolCalls: [{ index: 0, id: 'call_a', name: 'f', arguments: '{"x"' }, { index: 1, id: 'call_b', name: 'g' }] },
      { type: 'delta', text: '', toolCalls: [{ index: 1, arguments: '{}' }, { index: 0, arguments: ':1}' }] },
      { type: 'done', provider: 'openai', model: 'm', finishReason: 'tool_calls', usage: { inputTokens: 5, outputTokens: 7 } },
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const completed = events.at(-1)!.response;
    expect(completed.output).toEqual([
      expect.objectContaining({ type: 'message', content: [expect.objectContaining({ type: 'output_text', text: 'Let me check.' })] }),
      expect.objectContaining({ type: 'function_call', call_id: 'call_a', name: 'f', arguments: '{"x":1}', status: 'completed' }),
      expect.objectContaining({ type: 'function_call', call_id: 'call_b', name: 'g', arguments: '{}' }),
    ]);
    expect(completed.usage).toEqual({ input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 });
  });

  it("names a call of a namespace's function by its own name and namespace, as Codex CLI declared it", () => {
    const tools = [
      { type: 'function', name: 'exec_command' },
      { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents.', tools: [{ type: 'function', name: 'spawn_agent' }] },
    ];
    const events = eventsOf(
      [
        { type: 'delta', text: '', toolCalls: [{ index: 0, id: 'call_a', name: 'multi_agent_v1__spawn_agent', arguments: '{"message":"go"}' }] },
        { type: 'delta', text: '', toolCalls: [{ index: 1, id: 'call_b', name: 'exec_command', arguments: '{}' }] },
        { type: 'done', provider: 'openai', model: 'm', finishReason: 'tool_calls' },
      ],
      tools,
    );
    const spawn = { type: 'function_call', call_id: 'call_a', name: 'spawn_agent', namespace: 'multi_agent_v1' };
    expect(events.find((event) => event.type === 'response.output_item.added')?.item).toMatchObject({ ...spawn, status: 'in_progress', arguments: '' });
    expect(events.find((event) => event.type === 'response.function_call_arguments.done')).toMatchObject({ name: 'spawn_agent', arguments: '{"message":"go"}' });
    const [namespaced, plain] = events.at(-1)!.response.output;
    expect(namespaced).toMatchObject({ ...spawn, status: 'completed', arguments: '{"message":"go"}' });
    expect(plain).toEqual(expect.objectContaining({ name: 'exec_command' }));
    expect(plain).not.toHaveProperty('namespace');
  });

  it('ends a stream stopped at the token limit with response.incomplete', () => {
    const events = eventsOf([{ type: 'delta', text: 'cut' }, { type: 'done', provider: 'openai', model: 'm', finishReason: 'length' }]);
    expect(events.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } });
  });

  it('answers a failure after the first event with response.failed carrying the sanitized error', () => {
    const stream = new ResponsesStream(responseHeader({ model: 'm', input: 'hi' }, 'openai/m'), callNames(undefined));
    stream.opening();
    stream.render({ type: 'delta', text: 'part' });
    const { frame } = stream.failure(new Error('socket hang up with secret upstream text'));
    const body = JSON.parse(frame.split('\n')[1].slice('data: '.length));
    expect(body).toMatchObject({ type: 'response.failed', sequence_number: 5, response: { status: 'failed', error: { code: expect.any(String) } } });
    expect(frame).not.toContain('secret upstream text');
  });

  describe("an OpenAI upstream's own events (docs/decisions.md B19)", () => {
    const upstream = { id: 'resp_up', object: 'response', status: 'in_progress', model: 'gpt-5', store: false, previous_response_id: null, output: [] as object[] };
    const frame = (type: string, sequence: number, payload: object) => ({ event: type, data: JSON.stringify({ type, sequence_number: sequence, ...payload }) });
    const created = frame('response.created', 0, { response: upstream });
    const delta = { event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","sequence_number":1,"delta":"Hi \u00e9"}' };
    const item = { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'sealed' };
    const completed = frame('response.completed', 2, { response: { ...upstream, status: 'completed', output: [item] } });
    const header = () => responseHeader({ model: 'gpt', input: 'hi', previous_response_id: 'resp_prev' }, 'openai/gpt');

    it('writes each event as it came, only the echo of the request in the Response-carrying ones changed; settles the final Response first', () => {
      const stream = new ResponsesStream(header(), callNames(undefined));
      const done = { type: 'done' as const, provider: 'openai', model: 'gpt-5-2025', native: [completed] };
      const { response, output } = stream.settle(done);
      expect(response).toMatchObject({ id: 'resp_up', model: 'openai/gpt-5-2025', store: true, previous_response_id: 'resp_prev', output: [item] });
      expect(output).toEqual([item]);
      const text = stream.opening() + stream.render({ type: 'delta', text: '', native: [created] }) + stream.render({ type: 'delta', text: 'Hi é', native: [delta] }) + stream.render(done);
      const echoed = (data: string, model: string) => JSON.stringify({ ...JSON.parse(data), response: { ...JSON.parse(data).response, model, store: true, previous_response_id: 'resp_prev' } });
      expect(text).toBe(
        `event: response.created\ndata: ${echoed(created.data, 'openai/gpt')}\n\n` +
          `event: response.output_text.delta\ndata: ${delta.data}\n\n` +
          `event: response.completed\ndata: ${echoed(completed.data, 'openai/gpt-5-2025')}\n\n`,
      );
    });

    it('ends a broken stream with its own response.failed, numbered after the events written', () => {
      const stream = new ResponsesStream(header(), callNames(undefined));
      stream.render({ type: 'delta', text: '', native: [created] });
      stream.render({ type: 'delta', text: '', native: [delta] });
      const failed = JSON.parse(stream.failure(new Error('upstream text')).frame.split('\n')[1].slice('data: '.length));
      expect(failed).toMatchObject({ type: 'response.failed', sequence_number: 2, response: { id: 'resp_up', model: 'openai/gpt', status: 'failed', error: { code: expect.any(String) } } });
      expect(JSON.stringify(failed)).not.toContain('upstream text');
    });
  });
});
