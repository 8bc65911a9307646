import type { ResponseItem } from './responses-input';
import { inputItems } from './responses-input';
import { nativeRequest } from './responses-native';
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
