import { domainMessages, generationParameters, parseCountTokensRequest, parseMessagesRequest, toolDefinitions } from './anthropic-requests';

const base = { model: 'openai/gpt-test', max_tokens: 32 };
const messageOf = (error: () => unknown) => {
  try {
    error();
  } catch (caught) {
    return (caught as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('parseMessagesRequest', () => {
  it('takes what Claude Code sends routinely: cache_control, thinking, context_management, output_config effort, metadata, tool extras', () => {
    const request = parseMessagesRequest({
      ...base,
      system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
      tools: [{ name: 'Read', description: 'Reads', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' }, defer_loading: true, strict: true, eager_input_streaming: true }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'high' },
      metadata: { user_id: 'user_abc' },
      stream: true,
    });
    expect(request.model).toBe('openai/gpt-test');
  });

  it('takes adaptive thinking with its display, as Claude Code 2.1.332 sends it', () => {
    const request = parseMessagesRequest({ ...base, messages: [], thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'high' } });
    expect(request.thinking).toEqual({ type: 'adaptive', display: 'omitted' });
    expect(messageOf(() => parseMessagesRequest({ ...base, messages: [], thinking: { type: 'adaptive', display: 1 } }))).toMatch(/^thinking\.display: /);
  });

  it.each([
    [{ ...base, messages: [], top_k: -1 }, /^top_k: Input should be >= 0$/],
    [{ model: 'm', messages: [] }, /^max_tokens: Field required$/],
    [{ ...base, messages: [], frequency_penalty: 1 }, /^frequency_penalty: Extra inputs are not permitted$/],
    [{ ...base, messages: [{ role: 'tool', content: 'x' }] }, /^messages\.0\.role: Input should be 'user', 'assistant', 'system'$/],
    [{ ...base, messages: [], temperature: 1.5 }, /^temperature: Input should be <= 1$/],
    [{ ...base, messages: [], tool_choice: { type: 'required' } }, /^tool_choice\.type: /],
  ])('refuses %j naming the field', (body, message) => {
    expect(messageOf(() => parseMessagesRequest(body))).toMatch(message);
  });

  it('a null output format is the same as none', () => {
    expect(generationParameters(parseMessagesRequest({ ...base, messages: [], output_config: { effort: 'low', format: null }, output_format: null })).responseFormat).toBeUndefined();
  });

  it('count_tokens takes the body without max_tokens', () => {
    expect(parseCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).model).toBe('m');
  });
});

describe('generationParameters', () => {
  it('maps the sampling settings, stop sequences, tools and tool_choice into the domain request', () => {
    const parameters = generationParameters(
      parseMessagesRequest({
        ...base,
        messages: [],
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['END'],
        tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
      }),
    );
    expect(parameters).toEqual({
      maxTokens: 32,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      stop: ['END'],
      tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
      toolChoice: 'required',
      parallelToolCalls: false,
      responseFormat: undefined,
    });
  });

  it.each([
    [{ type: 'auto' }, 'auto'],
    [{ type: 'none' }, 'none'],
    [{ type: 'tool', name: 'get_weather' }, { name: 'get_weather' }],
  ])('tool_choice %j is %j', (choice, expected) => {
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' } }];
    expect(generationParameters(parseMessagesRequest({ ...base, messages: [], tools, tool_choice: choice })).toolChoice).toEqual(expected);
  });

  it('structured output (output_config.format) is a json_schema response format', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const parameters = generationParameters(parseMessagesRequest({ ...base, messages: [], output_config: { format: { type: 'json_schema', schema } } }));
    expect(parameters.responseFormat).toEqual({ type: 'json_schema', name: 'output', schema });
  });

  it('leaves server tools and mcp_servers out of the domain request, naming them as Anthropic-only, never as custom tools', () => {
    const tools = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }, { name: 'get_weather', input_schema: { type: 'object' } }];
    const body = { ...base, messages: [], tools, mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] };
    const anthropicOnly: string[] = [];
    expect(generationParameters(parseMessagesRequest(body), anthropicOnly).tools).toEqual([{ name: 'get_weather', parameters: { type: 'object' } }]);
    expect(anthropicOnly).toEqual(['mcp_servers', "tools.0.type: server tool 'web_search_20250305'"]);
  });

  it('still checks a custom tool field by field', () => {
    const body = { ...base, messages: [], tools: [{ name: 'get_weather', input_schema: { type: 'object' }, max_uses: 2 }] };
    expect(messageOf(() => parseMessagesRequest(body))).toBe('tools.0.max_uses: Extra inputs are not permitted');
  });
});

describe('domainMessages', () => {
  it('keeps system blocks and a system message mid-list as system instructions where they stand', () => {
    const messages = domainMessages({
      system: [
        { type: 'text', text: 'One.' },
        { type: 'text', text: 'Two.' },
      ],
      messages: [
        { role: 'user', content: 'Hello' },
        { role: 'system', content: 'Three.' },
      ],
    });
    expect(messages).toEqual([
      { role: 'system', content: 'One.\n\nTwo.' },
      { role: 'user', content: 'Hello' },
      { role: 'system', content: 'Three.' },
    ]);
  });

  it('maps a tool loop: tool_use to tool calls, tool_result (is_error, text blocks) to tool messages before the turn text; thinking left out', () => {
    const messages = domainMessages({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Let me think', signature: 'sig' },
            { type: 'redacted_thinking', data: 'xxx' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }], cache_control: { type: 'ephemeral' } },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'clock broken', is_error: true },
            { type: 'text', text: 'And now?' },
          ],
        },
      ],
    });
    expect(messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        toolCalls: [
          { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'toolu_2', name: 'get_time', arguments: '{}' },
        ],
      },
      // cache_control on the result: a cache breakpoint at the end of its tool message.
      { role: 'tool', toolCallId: 'toolu_1', content: 'sunny', cache: {} },
      { role: 'tool', toolCallId: 'toolu_2', content: 'clock broken', isError: true },
      { role: 'user', content: 'And now?' },
    ]);
  });

  it('marks cache_control as a cache hint at the end of its message or tool (ttl kept), and a base64 PDF as a document part', () => {
    const request = {
      system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', title: 'Q3.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
            { type: 'text', text: 'Summarise.', cache_control: { type: 'ephemeral' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
      ],
    } as never;
    expect(domainMessages(request)).toEqual([
      { role: 'system', content: 'A\n\nB', cache: { ttl: '1h' } },
      {
        role: 'user',
        content: [
          { type: 'document', document: { mediaType: 'application/pdf', data: 'JVBERi0=', name: 'Q3.pdf' } },
          { type: 'text', text: 'Summarise.' },
        ],
        cache: {},
      },
      { role: 'assistant', content: 'Done.' },
    ]);
    const tools = [{ name: 't', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral', ttl: '5m' } }];
    expect(toolDefinitions(tools)).toEqual([{ name: 't', parameters: { type: 'object' }, cache: { ttl: '5m' } }]);
    expect(messageOf(() => toolDefinitions([{ ...tools[0], cache_control: { type: 'ephemeral', ttl: '2h' } }] as never))).toBe("tools.0.cache_control.ttl: expected '5m' or '1h'");
  });

  it('sends the images of a tool result in the user message after the results, the result saying so', () => {
    const messages = domainMessages({
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: 'screenshot.png' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
              ],
            },
          ],
        },
      ],
    });
    expect(messages).toEqual([
      { role: 'tool', toolCallId: 'toolu_1', content: 'screenshot.png\n[1 image(s) of this result follow in the next user message]' },
      { role: 'user', content: [{ type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }] },
    ]);
  });

  it('maps base64 and url images, and a text document', () => {
    const [message] = domainMessages({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/PNG', data: 'AAAA' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            { type: 'document', title: 'Notes', source: { type: 'text', media_type: 'text/plain', data: 'Remember.' } },
          ],
        },
      ],
    });
    expect(message).toEqual({
      role: 'user',
      content: [
        { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
        { type: 'image', image: { kind: 'url', url: 'https://example.com/a.png' } },
        { type: 'text', text: 'Notes\n\nRemember.' },
      ],
    });
  });

  it.each([
    [{ type: 'image', source: { type: 'file', file_id: 'f' } }, /^messages\.0\.content\.0\.source\.type: /],
    [{ type: 'document', source: { type: 'base64', media_type: 'image/png', data: 'x' } }, /^messages\.0\.content\.0\.source\.media_type: a document media type/],
    [{ type: 'document', source: {} }, /^messages\.0\.content\.0\.source\.type: Field required$/],
    [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: {} }] }, /^messages\.0\.content\.0\.content\.0\.source\.type: /],
    [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'document', source: {} }] }, /^messages\.0\.content\.0\.content\.0\.type: only text and image/],
    [{ type: 'server_tool_use', id: 'x' }, /^messages\.0\.content\.0\.type: 'server_tool_use' is not supported/],
    [{ type: 'text' }, /^messages\.0\.content\.0\.text: Field required$/],
  ])('refuses %j naming the block', (block, message) => {
    expect(messageOf(() => domainMessages({ messages: [{ role: 'user', content: [block as never] }] }))).toMatch(message);
  });

  it('names URL documents, citations and server-tool blocks as Anthropic-only, keeping a line for each document', () => {
    const anthropicOnly: string[] = [];
    const messages = domainMessages(
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'document', source: { type: 'url', url: 'https://example.com/report.pdf' }, title: 'Report' },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Notes' }, citations: { enabled: true } },
            ],
          },
          { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }, { type: 'web_search_tool_result', tool_use_id: 's', content: [] }, { type: 'text', text: 'Sunny.' }] },
        ],
      },
      anthropicOnly,
    );
    expect(messages).toEqual([
      { role: 'user', content: '[document: Report]\n\nNotes' },
      { role: 'assistant', content: 'Sunny.' },
    ]);
    expect(anthropicOnly).toEqual([
      "messages.0.content.0.source.type: 'url' document",
      'messages.0.content.1.citations',
      "messages.1.content.0.type: 'server_tool_use'",
      "messages.1.content.1.type: 'web_search_tool_result'",
    ]);
  });
});
