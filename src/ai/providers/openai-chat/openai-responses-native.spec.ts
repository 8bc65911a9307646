import { InvalidResponseError, ProviderError } from '../../errors';
import { fromResponsesBody, nativeResponsesBody, ResponsesEventReader } from './openai-responses-native';

describe('the Responses API of an OpenAI upstream (docs/decisions.md B19)', () => {
  const usage = { input_tokens: 7, input_tokens_details: { cached_tokens: 2 }, output_tokens: 8, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 15 };
  const domainUsage = { inputTokens: 7, cachedInputTokens: 2, outputTokens: 8, reasoningTokens: 5, totalTokens: 15 };

  it('sends the body with only model, the output bound and stream set', () => {
    const native = { dialect: 'openai-responses' as const, body: { model: 'alias', input: 'hi', stream: false, include: ['reasoning.encrypted_content'] }, headers: {} };
    expect(nativeResponsesBody(native, { messages: [], maxTokens: 512 }, 'gpt-5', true)).toEqual({ model: 'gpt-5', input: 'hi', include: ['reasoning.encrypted_content'], max_output_tokens: 512, stream: true });
    expect(nativeResponsesBody(native, { messages: [] }, 'gpt-5', false)).toEqual({ model: 'gpt-5', input: 'hi', include: ['reasoning.encrypted_content'] });
  });

  it('reads a Response for the domain and keeps it whole', () => {
    const body = {
      id: 'resp_1',
      model: 'gpt-5-2025',
      status: 'completed',
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'message', content: [{ type: 'output_text', text: 'Let me ' }, { type: 'output_text', text: 'check.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
      usage,
    };
    expect(fromResponsesBody(body, 'openai', 'gpt-5')).toEqual({
      text: 'Let me check.',
      model: 'gpt-5-2025',
      finishReason: 'tool_calls',
      usage: domainUsage,
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      native: body,
    });
    expect(fromResponsesBody({ ...body, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] }, 'openai', 'gpt-5').finishReason).toBe('length');
    expect(() => fromResponsesBody({ id: 'resp_1' }, 'openai', 'gpt-5')).toThrow(InvalidResponseError);
  });

  it('reads a stream: text, calls by item id, the end with usage; a failure event is a provider error', () => {
    const reader = new ResponsesEventReader('openai', 'gpt-5');
    expect(reader.read('response.created', { response: {} })).toBeUndefined();
    expect(reader.read('response.output_text.delta', { delta: 'Hi' })).toEqual({ done: false, text: 'Hi' });
    expect(reader.read('response.output_item.added', { item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '' } })).toEqual({
      done: false,
      text: '',
      toolCalls: [{ index: 0, id: 'call_1', name: 'f' }],
    });
    expect(reader.read('response.function_call_arguments.delta', { item_id: 'fc_1', delta: '{}' })).toEqual({ done: false, text: '', toolCalls: [{ index: 0, arguments: '{}' }] });
    expect(reader.read('response.completed', { response: { model: 'gpt-5-2025', status: 'completed', usage } })).toEqual({ done: true, model: 'gpt-5-2025', finishReason: 'tool_calls', usage: domainUsage });
    expect(() => reader.read('error', { code: 'server_error', message: 'upstream text' })).toThrow(ProviderError);
  });
});
