import { OpenAiRequestError } from '../openai/openai-requests';
import { domainMessages, inputItems, type ResponseItem } from './responses-input';
import { outputItems } from './responses-bodies';
import { callNames, parseResponsesRequest, responsesFormat, responsesTools, webSearchTool } from './responses-requests';

describe('Responses input as the domain messages', () => {
  it('instructions first; developer as system; function calls joined to the assistant turn before them; outputs as tool results', () => {
    const items = inputItems([
      { role: 'developer', content: 'Use tools.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }, { type: 'input_image', image_url: 'https://example.com/a.png' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'rain' }] },
      { type: 'reasoning', summary: [] },
    ]);
    expect(domainMessages('Be brief.', items as ResponseItem[])).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Use tools.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', image: { kind: 'url', url: 'https://example.com/a.png' }, detail: 'auto' }] },
      {
        role: 'assistant',
        content: 'Checking.',
        toolCalls: [
          { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny' },
      { role: 'tool', toolCallId: 'call_2', content: 'rain' },
    ]);
  });

  it('gives every item an id OpenAI-style, keeping the ones the caller sent', () => {
    const [message, call] = inputItems([{ role: 'user', content: 'hi' }, { type: 'function_call', id: 'fc_mine', call_id: 'c', name: 'n', arguments: '{}' }]);
    expect(message.type === 'message' && message.id).toMatch(/^msg_[0-9a-f]{48}$/);
    expect(call).toMatchObject({ id: 'fc_mine' });
  });

  it.each([
    [[{ type: 'input_file', file_id: 'f' }], 'input[0].content[0].type'],
    [[{ type: 'input_image', file_id: 'file-1' }], 'input[0].content[0].file_id'],
    [[{ type: 'input_text' }], 'input[0].content[0].text'],
  ])('refuses a content part it cannot carry, naming it: %j', (content, param) => {
    expect(() => inputItems([{ role: 'user', content }])).toThrow(expect.objectContaining({ param }));
  });

  it('refuses an item type it cannot carry, and a function call without its call_id, naming them', () => {
    expect(() => inputItems([{ type: 'file_search_call', id: 'fs_1' }])).toThrow(expect.objectContaining({ param: 'input[0].type', code: 'unsupported_value' }));
    expect(() => inputItems([{ type: 'web_search_call', status: 'completed' }])).toThrow(expect.objectContaining({ param: 'input[0].id', code: 'missing_required_parameter' }));
    expect(() => inputItems([{ type: 'function_call', name: 'n', arguments: '{}' }])).toThrow(expect.objectContaining({ param: 'input[0].call_id', code: 'missing_required_parameter' }));
  });
});

describe('web search calls', () => {
  it('a replayed web_search_call is kept as given and gives the model nothing: the message after it carries what it found', () => {
    const search = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'paris weather' } };
    const items = inputItems([{ role: 'user', content: 'Weather?' }, search, { role: 'assistant', content: 'Sunny.' }]) as ResponseItem[];
    expect(items[1]).toEqual(search);
    expect(domainMessages(undefined, items)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', content: 'Sunny.' },
    ]);
  });

  it('a web_search tool (and web_search_preview) is the web_search function; a function of that name besides it is refused', () => {
    const tools = [{ type: 'web_search_preview', search_context_size: 'low' }, { type: 'function', name: 'f' }];
    expect(responsesTools(tools)).toEqual([expect.objectContaining({ name: 'web_search', parameters: expect.objectContaining({ required: ['query'] }) }), { name: 'f' }]);
    expect(webSearchTool(tools)).toEqual({ param: 'tools[0].type', type: 'web_search_preview' });
    expect(webSearchTool([{ type: 'function', name: 'f' }])).toBeUndefined();
    expect(() => responsesTools([{ type: 'web_search' }, { type: 'function', name: 'web_search' }])).toThrow(expect.objectContaining({ param: 'tools[1].name', code: 'invalid_value' }));
  });
});

describe("Codex CLI's namespaced items", () => {
  it('a function call with its namespace is the qualified call its tools declared; its output a tool result', () => {
    const items = inputItems([
      { type: 'function_call', call_id: 'call_1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"message":"go"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '{"agent_id":"a1"}' },
    ]);
    expect(items[0]).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1' });
    expect(domainMessages(null, items as ResponseItem[])).toEqual([
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'multi_agent_v1__spawn_agent', arguments: '{"message":"go"}' }] },
      { role: 'tool', toolCallId: 'call_1', content: '{"agent_id":"a1"}' },
    ]);
  });

  it("an output with a namespace and no call_id (a goal's objective) is kept as such and told to the model as a system message", () => {
    const items = inputItems([
      { role: 'user', content: 'Set a goal' },
      { type: 'function_call_output', id: 'fco_goal', name: 'goal_objective', namespace: 'agent', output: 'Find the secret word' },
    ]);
    expect(items[1]).toEqual({ type: 'function_call_output', id: 'fco_goal', status: 'completed', namespace: 'agent', name: 'goal_objective', output: 'Find the secret word' });
    expect(domainMessages(null, items as ResponseItem[])[1]).toEqual({ role: 'system', content: 'agent.goal_objective: Find the secret word' });
  });

  it('an output without a call_id needs its name when it has a namespace, and its call_id when it has none', () => {
    expect(() => inputItems([{ type: 'function_call_output', namespace: 'agent', output: 'x' }])).toThrow(expect.objectContaining({ param: 'input[0].name', code: 'missing_required_parameter' }));
    expect(() => inputItems([{ type: 'function_call_output', name: 'goal_objective', output: 'x' }])).toThrow(expect.objectContaining({ param: 'input[0].call_id', code: 'missing_required_parameter' }));
    expect(() => inputItems([{ type: 'function_call', call_id: 'c', name: 'n', namespace: 7, arguments: '{}' }])).toThrow(expect.objectContaining({ param: 'input[0].namespace', code: 'invalid_type' }));
  });
});

describe('namespace tools', () => {
  const multiAgent = {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: 'Tools for spawning and managing sub-agents.',
    tools: [
      { type: 'function', name: 'spawn_agent', description: 'Spawn an agent.', strict: false, parameters: { type: 'object', properties: { message: { type: 'string' } } } },
      { type: 'function', name: 'wait_agent', parameters: { type: 'object' } },
    ],
  };

  it("become function tools named '<namespace>__<name>', the namespace's description before each function's", () => {
    expect(responsesTools([{ type: 'function', name: 'exec_command' }, multiAgent])).toEqual([
      { name: 'exec_command' },
      { name: 'multi_agent_v1__spawn_agent', description: 'Tools for spawning and managing sub-agents.\n\nSpawn an agent.', strict: false, parameters: { type: 'object', properties: { message: { type: 'string' } } } },
      { name: 'multi_agent_v1__wait_agent', description: 'Tools for spawning and managing sub-agents.', parameters: { type: 'object' } },
    ]);
  });

  it("a model's call of a qualified name comes back as the function and its namespace; other names as they are", () => {
    const names = callNames([{ type: 'function', name: 'exec_command' }, multiAgent]);
    expect(names('multi_agent_v1__wait_agent')).toEqual({ name: 'wait_agent', namespace: 'multi_agent_v1' });
    expect(names('exec_command')).toEqual({ name: 'exec_command' });
    const [call] = outputItems('', [{ id: 'call_9', name: 'multi_agent_v1__spawn_agent', arguments: '{}' }], names);
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_9', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{}' });
  });

  it.each([
    [{ ...multiAgent, tools: [{ type: 'custom', name: 'apply_patch' }] }, 'tools[0].tools[0].type', 'unsupported_value'],
    [{ ...multiAgent, tools: [{ type: 'function', name: 'f', defer_loading: true }] }, 'tools[0].tools[0].defer_loading', 'unknown_parameter'],
    [{ ...multiAgent, tools: [] }, 'tools[0].tools', undefined],
    [{ ...multiAgent, name: 'multi agent' }, 'tools[0].name', undefined],
    [{ ...multiAgent, name: 'n'.repeat(40), tools: [{ type: 'function', name: 'f'.repeat(30) }] }, 'tools[0].tools[0].name', 'invalid_value'],
  ])('refuses what a model cannot be given, naming it: %#', (tool, param, code) => {
    expect(() => responsesTools([tool])).toThrow(expect.objectContaining({ param, ...(code ? { code } : {}) }));
  });

  it('refuses a qualified name that another tool already has, naming the later one', () => {
    expect(() => responsesTools([{ type: 'function', name: 'multi_agent_v1__wait_agent' }, multiAgent])).toThrow(expect.objectContaining({ param: 'tools[1].tools[1].name', code: 'invalid_value' }));
  });
});

describe('Responses request fields', () => {
  it("accepts the hints clients send routinely (prompt_cache_key, safety_identifier, include, reasoning)", () => {
    const body = { model: 'm', input: 'hi', prompt_cache_key: 'k', safety_identifier: 's', include: ['reasoning.encrypted_content'], reasoning: { effort: 'low' }, store: false };
    expect(parseResponsesRequest(body)).toBe(body);
  });

  it('refuses unknown fields and out-of-range values naming them', () => {
    expect(() => parseResponsesRequest({ model: 'm', input: 'hi', frequency_penalty: 1 })).toThrow(expect.objectContaining({ param: 'frequency_penalty', code: 'unknown_parameter' }));
    expect(() => parseResponsesRequest({ model: 'm', input: 'hi', max_output_tokens: 8 })).toThrow(expect.objectContaining({ param: 'max_output_tokens' }));
    expect(() => parseResponsesRequest({ model: 'm', input: 'hi', text: { format: { type: 'xml' } } })).toThrow(expect.objectContaining({ param: 'text.format.type' }));
  });

  it('function tools map to the domain; other tool types and bad function fields are refused by their path', () => {
    expect(responsesTools([{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true, description: null }])).toEqual([{ name: 'f', parameters: { type: 'object' }, strict: true }]);
    expect(() => responsesTools([{ type: 'function', name: 'f' }, { type: 'file_search' }])).toThrow(expect.objectContaining({ param: 'tools[1].type' }));
    expect(() => responsesTools([{ type: 'function', name: 'bad name' }])).toThrow(expect.objectContaining({ param: 'tools[0].name' }));
  });

  it('text.format json_schema needs its name and schema', () => {
    expect(responsesFormat({ format: { type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: true } })).toEqual({ type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: true });
    expect(() => responsesFormat({ format: { type: 'json_schema', name: 'x' } })).toThrow(OpenAiRequestError);
  });
});
