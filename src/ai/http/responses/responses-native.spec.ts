import type { ResponseItem } from './responses-input';
import { inputItems } from './responses-input';
import { echoedText, nativeRequest } from './responses-native';
import type { ResponsesRequest } from './responses-requests';

describe('the Responses body for an OpenAI upstream (docs/decisions.md B19)', () => {
  const user = { type: 'message', id: 'msg_1', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] } as ResponseItem;
  const sealed = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'sealed' } as ResponseItem;
  const unsealed = { type: 'reasoning', id: 'rs_2', summary: [] } as ResponseItem;
  const call = { type: 'function_call', id: 'fc_1', status: 'completed', call_id: 'call_1', name: 'get_weather', arguments: '{}' } as ResponseItem;

  it("is the caller's body with store false and no previous_response_id", () => {
    const request: ResponsesRequest = { model: 'm', input: [{ type: 'reasoning', summary: [], encrypted_content: 'x' }], include: ['reasoning.encrypted_content'], store: true };
    expect(nativeRequest(request, [], inputItems(request.input) as ResponseItem[])).toEqual({ dialect: 'openai-responses', body: { ...request, store: false }, headers: {} });
  });

  it('expands a continuation from the store, leaving out reasoning without its encrypted content, and resolves references', () => {
    const output = { type: 'function_call_output', call_id: 'call_1', output: 'sunny' };
    const request: ResponsesRequest = { model: 'm', previous_response_id: 'resp_1', input: [{ type: 'item_reference', id: 'fc_1' }, output] };
    const { body } = nativeRequest(request, [user, unsealed, sealed], [call, { ...output, id: 'fco_1', status: 'completed' } as ResponseItem]);
    expect(body).toEqual({ model: 'm', input: [user, sealed, call, output], store: false });
  });

  it('a string input continuing a conversation is one user message', () => {
    expect(nativeRequest({ model: 'm', input: 'Again', previous_response_id: 'resp_1' }, [user], []).body.input).toEqual([user, { role: 'user', content: 'Again' }]);
  });
});

describe("the echo of the caller's request in an upstream event's text (docs/decisions.md B19)", () => {
  const echo = { model: 'openai/gpt-5', store: true, previous_response_id: 'resp_prev' };
  const response = {
    id: 'resp_up',
    instructions: 'Say "model": "x" \\',
    model: 'gpt-5-2025',
    output: [{ type: 'message', content: [{ type: 'output_text', text: '{"store":false}' }], model: 'inner' }],
    previous_response_id: null,
    store: false,
    text: { format: { type: 'json_schema', schema: { properties: { model: { const: 'schema' } } } } },
    tools: [{ type: 'image_generation', model: 'gpt-image-1' }],
    metadata: { model: 'caller metadata', store: 'kept' },
  };
  const event = { type: 'response.completed', sequence_number: 9, response };

  it("replaces only the Response's own model, store and previous_response_id, every other byte as it came", () => {
    const data = JSON.stringify(event);
    const text = echoedText(data, echo);
    expect(text).toBe(JSON.stringify({ ...event, response: { ...response, model: 'openai/gpt-5', previous_response_id: 'resp_prev', store: true } }));
  });

  it('reads spaced JSON as compact', () => {
    const text = echoedText(JSON.stringify(event, null, 2), echo);
    expect(JSON.parse(text!)).toEqual({ ...event, response: { ...response, model: 'openai/gpt-5', previous_response_id: 'resp_prev', store: true } });
  });

  it('gives up where the text is not laid out so: a key missing, repeated, spelled with escapes, or not a scalar', () => {
    const { store: _store, ...withoutStore } = response;
    expect(echoedText(JSON.stringify({ ...event, response: withoutStore }), echo)).toBeUndefined();
    expect(echoedText(JSON.stringify(event).replace('"model":"gpt-5-2025"', '"model":"gpt-5-2025","model":"again"'), echo)).toBeUndefined();
    expect(echoedText(JSON.stringify(event).replace('"model":"gpt-5-2025"', '"mod\\u0065l":"gpt-5-2025"'), echo)).toBeUndefined();
    expect(echoedText(JSON.stringify({ ...event, response: { ...response, model: { name: 'gpt-5' } } }), echo)).toBeUndefined();
    expect(echoedText('{"type":"response.created","response":{"model":"unterminated}}', echo)).toBeUndefined();
  });
});
