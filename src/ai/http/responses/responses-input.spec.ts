import { OpenAiRequestError } from '../openai/openai-requests';
import { domainMessages, inputItems, type ResponseItem } from './responses-input';
import { parseResponsesRequest, responsesFormat, responsesTools } from './responses-requests';

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
    expect(() => inputItems([{ type: 'web_search_call', id: 'ws_1' }])).toThrow(expect.objectContaining({ param: 'input[0].type', code: 'unsupported_value' }));
    expect(() => inputItems([{ type: 'function_call', name: 'n', arguments: '{}' }])).toThrow(expect.objectContaining({ param: 'input[0].call_id', code: 'missing_required_parameter' }));
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
