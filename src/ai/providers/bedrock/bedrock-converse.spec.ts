import { mapBedrockStopReason, toBedrockUsage } from './bedrock-converse';
import { bedrockExceptionName } from './bedrock-errors';

describe('Bedrock Converse readings', () => {
  it("maps Converse's stop reasons onto the domain's, passing unknown plain tokens through", () => {
    expect(['end_turn', 'stop_sequence', 'max_tokens', 'tool_use', 'guardrail_intervened', 'content_filtered'].map(mapBedrockStopReason)).toEqual([
      'stop',
      'stop',
      'length',
      'tool_calls',
      'content_filter',
      'content_filter',
    ]);
    expect(mapBedrockStopReason('new_reason')).toBe('new_reason');
    expect(mapBedrockStopReason('Not A Token!')).toBeUndefined();
  });

  it('adds cache reads and writes to the input tokens (Converse counts them apart) and reports reads and writes as parts of it', () => {
    expect(toBedrockUsage({ inputTokens: 10, outputTokens: 5, totalTokens: 135, cacheReadInputTokens: 100, cacheWriteInputTokens: 20 })).toEqual({
      inputTokens: 130,
      outputTokens: 5,
      totalTokens: 135,
      cachedInputTokens: 100,
      cacheWriteInputTokens: 20,
    });
    expect(toBedrockUsage({ inputTokens: 3, outputTokens: 2 })).toEqual({ inputTokens: 3, outputTokens: 2, totalTokens: 5 });
    expect(toBedrockUsage(null)).toBeUndefined();
  });

  it('reads the exception name from x-amzn-errortype or a stream header', () => {
    expect(bedrockExceptionName('ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/')).toBe('ThrottlingException');
    expect(bedrockExceptionName('modelStreamErrorException')).toBe('ModelStreamErrorException');
    expect(bedrockExceptionName('<html>')).toBeUndefined();
  });
});
