import { demoAnswer, describeImage } from './demo-answer';

const tool = (name: string, parameters: unknown = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }) => ({
  type: 'function',
  function: { name, parameters },
});
const user = (content: unknown) => ({ role: 'user', content });

describe('demoAnswer', () => {
  it('calls a tool under auto only when the prompt names it as whole words', () => {
    const tools = [tool('Read'), tool('get_weather')];
    expect(demoAnswer({ tools, messages: [user('already read?')] })).toMatchObject({ kind: 'tool_call', call: { name: 'Read', arguments: '{"path":"demo"}' } });
    expect(demoAnswer({ tools, messages: [user('already done')] })).toMatchObject({ kind: 'text' });
    expect(demoAnswer({ tools, messages: [user('the Get Weather tool, please')] })).toMatchObject({ kind: 'tool_call', call: { name: 'get_weather' } });
    expect(demoAnswer({ tools, tool_choice: 'none', messages: [user('Read it')] })).toMatchObject({ kind: 'text' });
    expect(demoAnswer({ tools: [tool('lookUpOrder')], messages: [user('Please look up order 7')] })).toMatchObject({ kind: 'tool_call', call: { name: 'lookUpOrder' } });
  });

  it('calls a tool under auto once per conversation, and answers a tool result in text', () => {
    const tools = [tool('Read')];
    const called = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'Read', arguments: '{}' } }] };
    const result = { role: 'tool', tool_call_id: 'call_1', content: 'file text' };
    expect(demoAnswer({ tools, messages: [user('Read x'), called, result] })).toEqual({ kind: 'text', text: '[demo] The tool Read returned: file text' });
    expect(demoAnswer({ tools, messages: [user('Read x'), called, result, user('Read y')] })).toMatchObject({ kind: 'text' });
    expect(demoAnswer({ tools, tool_choice: 'required', messages: [user('Read x'), called, result, user('again')] })).toMatchObject({ kind: 'tool_call' });
  });

  it('takes the prompt from the last message that is not a system or developer instruction', () => {
    const tools = [tool('Agent')];
    const reminder = { role: 'system', content: [{ type: 'text', text: 'Available agent types for the Agent tool: ...' }] };
    expect(demoAnswer({ tools, messages: [user('Say hello'), reminder] })).toEqual({
      kind: 'text',
      text: "[demo] Tollgate's built-in demo provider answering, not a language model. You said: Say hello",
    });
    expect(demoAnswer({ tools, messages: [user('ask the Agent'), reminder] })).toMatchObject({ kind: 'tool_call', call: { name: 'Agent' } });
  });

  it.each([
    ['Claude Code', '<system-reminder>\nUse the Agent tool for commits\n</system-reminder>\n'],
    ['Gemini CLI', '<session_context>\nThis is the Gemini CLI. Agent notes.\n</session_context>'],
  ])("leaves out of the prompt what %s adds in its tags, so neither the echo nor a tool's name comes from it", (_client, context) => {
    const prompt = user([{ type: 'text', text: context }, { type: 'text', text: 'Say hello' }]);
    expect(demoAnswer({ tools: [tool('Agent')], messages: [prompt] })).toEqual({
      kind: 'text',
      text: "[demo] Tollgate's built-in demo provider answering, not a language model. You said: Say hello",
    });
  });

  it('calls the named function a tool_choice forces, with an object of arguments even for an empty schema', () => {
    const tools = [tool('first'), tool('second', {})];
    const answer = demoAnswer({ tools, tool_choice: { type: 'function', function: { name: 'second' } }, messages: [user('hi')] });
    expect(answer).toMatchObject({ kind: 'tool_call', call: { name: 'second', arguments: '{}' } });
  });

  it('answers json_object with a JSON object echoing the prompt', () => {
    const answer = demoAnswer({ response_format: { type: 'json_object' }, messages: [user('Hi')] });
    expect(answer.kind === 'text' && JSON.parse(answer.text)).toEqual({ demo: true, you_said: 'Hi' });
  });
});

describe('describeImage', () => {
  it('tells a data URL\'s media type and decoded size, a URL\'s host, or that it is no URL', () => {
    expect(describeImage(`data:image/jpeg;base64,${Buffer.alloc(300).toString('base64')}`)).toBe('image/jpeg, 300 bytes');
    expect(describeImage('data:text/plain,a%20b')).toBe('text/plain, 3 bytes');
    expect(describeImage('https://cdn.example.com/a.png')).toBe('at cdn.example.com');
    expect(describeImage('nonsense')).toBe('at an address that is not a URL');
  });
});
