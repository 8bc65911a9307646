import type { GenerateStreamEvent } from '../../client/ai-client';
import { BudgetExceededError } from '../../../governance/budgets/budget-errors';
import { messageStreamFormat } from './anthropic-stream';

/** The frames of a whole stream as `{event, data}` pairs, in order. */
function frames(events: GenerateStreamEvent[]): Array<{ event: string; data: Record<string, any> }> {
  const format = messageStreamFormat('openai/gpt-test', 7);
  const text = format.opening() + events.map((event) => format.render(event)).join('');
  return text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      return { event: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) };
    });
}

const done: GenerateStreamEvent = { type: 'done', provider: 'openai', model: 'gpt-test', finishReason: 'tool_calls', usage: { inputTokens: 30, outputTokens: 5, cachedInputTokens: 10 } };

describe('messageStreamFormat', () => {
  it("sends Anthropic's event order: message_start with usage, ping, each block started, filled and stopped, message_delta, message_stop", () => {
    const sent = frames([
      { type: 'delta', text: 'Let me ' },
      { type: 'delta', text: 'check.' },
      { type: 'delta', text: '', toolCalls: [{ index: 0, id: 'call_1', name: 'get_weather', arguments: '{"city":' }] },
      { type: 'delta', text: '', toolCalls: [{ index: 0, arguments: '"Paris"}' }] },
      done,
    ]);
    expect(sent.map((frame) => frame.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(sent[0].data.message).toMatchObject({ type: 'message', role: 'assistant', model: 'openai/gpt-test', content: [], usage: { input_tokens: 7, output_tokens: 0 } });
    expect(sent[2].data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(sent[3].data).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } });
    expect(sent[6].data).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } });
    expect(sent[7].data).toEqual({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } });
    // Cache reads are counted beside input_tokens, as Anthropic does, not twice.
    expect(sent[10].data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 20, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 10, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } },
    });
  });

  it('never interleaves blocks: the pieces of a second call arriving between the first one\'s are held and sent whole after it', () => {
    const sent = frames([
      { type: 'delta', text: '', toolCalls: [{ index: 0, id: 'a', name: 'one', arguments: '' }] },
      { type: 'delta', text: '', toolCalls: [{ index: 1, id: 'b', name: 'two', arguments: '{"x"' }] },
      { type: 'delta', text: '', toolCalls: [{ index: 0, arguments: '{"y":2}' }] },
      { type: 'delta', text: '', toolCalls: [{ index: 1, arguments: ':1}' }] },
      done,
    ]);
    const blocks = sent.filter((frame) => frame.event.startsWith('content_block')).map((frame) => [frame.event, frame.data.index, frame.data.delta?.partial_json ?? frame.data.content_block?.id]);
    expect(blocks).toEqual([
      ['content_block_start', 0, 'a'],
      ['content_block_delta', 0, '{"y":2}'],
      ['content_block_stop', 0, undefined],
      ['content_block_start', 1, 'b'],
      ['content_block_delta', 1, '{"x":1}'],
      ['content_block_stop', 1, undefined],
    ]);
  });

  it("writes an upstream's own events as they came, message_start naming the model as asked (also when not compact JSON)", () => {
    const format = messageStreamFormat('anthropic/claude-x', 1);
    const compact = '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x-2025\\"q","content":[],"usage":{"input_tokens":3}}}';
    const spaced = '{"type": "message_start", "message": {"model": "claude-x", "content": []}}';
    const written = format.render({ type: 'delta', text: '', native: [{ event: 'message_start', data: compact }, { event: 'ping', data: '{"type": "ping"}' }] });
    expect(written).toBe(
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"anthropic/claude-x","content":[],"usage":{"input_tokens":3}}}\n\n' +
        'event: ping\ndata: {"type": "ping"}\n\n',
    );
    const again = messageStreamFormat('anthropic/claude-x', 1).render({ type: 'delta', text: '', native: [{ event: 'message_start', data: spaced }] });
    expect(JSON.parse(again.split('data: ')[1])).toEqual({ type: 'message_start', message: { model: 'anthropic/claude-x', content: [] } });
  });

  it('ends a stream that fails after the first byte with an Anthropic error event', () => {
    const failure = messageStreamFormat('m', 1).failure(new BudgetExceededError({ kind: 'key', id: 'k1', period: 'day', limit: { tokens: 10 } }, 'tokens', new Date(0)));
    expect(failure.frame).toMatch(/^event: error\ndata: /);
    expect(JSON.parse(failure.frame.split('data: ')[1])).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: expect.any(String) } });
  });
});
