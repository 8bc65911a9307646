import { agentToolDefinitions, parseNativeTurn, renderNativeMessages } from './agent-native-protocol';
import { utf8Length } from './utf8-truncate';

const options = { allowlist: new Set(['web_search', 'whoami']), maxActionBytes: 64, maxResponseBytes: 256 };
const call = (name: string, args: string, id = 'call_1') => ({ id, name, arguments: args });

describe('parseNativeTurn', () => {
  it('reads a turn without tool calls as the answer', () => {
    expect(parseNativeTurn({ response: '  Paris.\n' }, options)).toEqual({ kind: 'answer', text: 'Paris.' });
    expect(parseNativeTurn({ response: 'Paris.', toolCalls: [] }, options)).toEqual({ kind: 'answer', text: 'Paris.' });
  });

  it('reads one allowlisted call as the action, keeping the text beside it', () => {
    const search = call('web_search', '{"query":"capital of France"}');
    expect(parseNativeTurn({ response: 'Let me look.', toolCalls: [search] }, options)).toEqual({
      kind: 'action',
      tool: 'web_search',
      args: { query: 'capital of France' },
      call: search,
      text: 'Let me look.',
    });
  });

  it.each(['', '  ', '{}'])('reads empty arguments %j as {}', (args) => {
    expect(parseNativeTurn({ response: '', toolCalls: [call('whoami', args)] }, options)).toMatchObject({ kind: 'action', tool: 'whoami', args: {} });
  });

  it.each([
    ['several calls', { response: '', toolCalls: [call('whoami', '{}'), call('web_search', '{"query":"x"}', 'call_2')] }, 'multiple_actions'],
    ['a tool outside the allowlist', { response: '', toolCalls: [call('shell', '{}')] }, 'unknown_tool'],
    ['arguments that are not JSON', { response: '', toolCalls: [call('web_search', '{"query":')] }, 'invalid_json'],
    ['arguments that are an array', { response: '', toolCalls: [call('web_search', '["x"]')] }, 'invalid_action'],
    ['arguments that are a string', { response: '', toolCalls: [call('web_search', '"x"')] }, 'invalid_action'],
    ['arguments over maxActionBytes', { response: '', toolCalls: [call('web_search', JSON.stringify({ query: 'x'.repeat(64) }))] }, 'action_too_large'],
    ['a turn over maxResponseBytes', { response: 'x'.repeat(257) }, 'response_too_large'],
    ['a call that makes the turn exceed maxResponseBytes', { response: 'x'.repeat(250), toolCalls: [call('whoami', '{}')] }, 'response_too_large'],
  ])('refuses %s as a protocol violation', (_name, answer, violation) => {
    expect(() => parseNativeTurn(answer, options)).toThrow(expect.objectContaining({ type: 'agent_protocol_error', violation }));
  });
});

describe('renderNativeMessages', () => {
  const turn = (n: number) => ({ call: call('web_search', `{"query":"q${n}"}`, `call_${n}`), text: n === 1 ? 'Searching.' : '', observation: `{"tool":"web_search","ok":true,"result":"${'r'.repeat(100)}"}` });

  it('answers each call with a tool message naming its id', () => {
    expect(renderNativeMessages('find it', [turn(1), turn(2)], 10_000)).toEqual([
      { role: 'user', content: 'find it' },
      { role: 'assistant', content: 'Searching.', toolCalls: [turn(1).call] },
      { role: 'tool', toolCallId: 'call_1', content: turn(1).observation },
      { role: 'assistant', content: null, toolCalls: [turn(2).call] },
      { role: 'tool', toolCallId: 'call_2', content: turn(2).observation },
    ]);
  });

  it('drops the oldest turns whole, call and result together, behind one marker, within the limit', () => {
    const turns = [1, 2, 3, 4, 5].map(turn);
    const messages = renderNativeMessages('find it', turns, 400);
    expect(messages[0]).toEqual({ role: 'user', content: expect.stringMatching(/^find it\n\n\[\d earlier tool turns omitted to fit the context limit\]$/) });
    expect(messages.slice(1).map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant', 'tool']);
    expect(messages.at(-1)).toMatchObject({ toolCallId: 'call_5' });
    const kept = turns.filter((candidate) => messages.some((message) => message.role === 'tool' && message.toolCallId === candidate.call.id));
    const counted = kept.reduce((sum, t) => sum + utf8Length(t.text) + utf8Length(t.call.name) + utf8Length(t.call.arguments) + utf8Length(t.observation), 0);
    expect(utf8Length(messages[0].content as string) + counted).toBeLessThanOrEqual(400);
    expect(renderNativeMessages('find it', turns, 400)).toEqual(messages);
  });
});

describe('agentToolDefinitions', () => {
  it('sends each allowed tool with its description and argument schema', () => {
    const parameters = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };
    expect(agentToolDefinitions([{ name: 'web_search', description: 'Web search.', parameters }])).toEqual([{ name: 'web_search', description: 'Web search.', parameters }]);
  });
});
