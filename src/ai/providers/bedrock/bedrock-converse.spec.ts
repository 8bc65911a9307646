import { mapBedrockStopReason, toBedrockUsage, toConverseBody } from './bedrock-converse';
import { bedrockExceptionName } from './bedrock-errors';

describe('Bedrock Converse readings', () => {
  const images = { inline: (messages: never) => Promise.resolve(messages) } as never;
  const ask = { messages: [{ role: 'user' as const, content: 'Hi' }] };

  it('refuses what Converse has no field for, naming it, and takes the no-op values', async () => {
    for (const [extra, param] of [[{ seed: 1 }, 'seed'], [{ frequencyPenalty: 0.5 }, 'frequency_penalty'], [{ topK: 5 }, 'top_k'], [{ parallelToolCalls: false }, 'parallel_tool_calls']] as const) {
      await expect(toConverseBody({ ...ask, ...extra }, 'bedrock', images)).rejects.toMatchObject({ param, message: `bedrock: bedrock does not support ${param}` });
    }
    const body = await toConverseBody({ ...ask, presencePenalty: 0, parallelToolCalls: true, topK: 64, topKOptional: true }, 'bedrock', images);
    expect(body).toEqual({ messages: [{ role: 'user', content: [{ text: 'Hi' }] }] });
  });

  it('sends cache hints as cachePoint blocks and names documents as Converse allows', async () => {
    const body = await toConverseBody(
      {
        messages: [
          { role: 'system', content: 'S', cache: { ttl: '1h' } },
          { role: 'user', content: [{ type: 'document', document: { mediaType: 'application/pdf', data: 'JVBE', name: 'Q3 (final) report.v2.pdf' } }, { type: 'text', text: 'Read' }], cache: {} },
        ],
        tools: [{ name: 't', cache: {} }],
      },
      'bedrock',
      images,
    );
    expect(body.system).toEqual([{ text: 'S' }, { cachePoint: { type: 'default', ttl: '1h' } }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ document: { format: 'pdf', name: 'Q3 (final) report-v2', source: { bytes: 'JVBE' } } }, { text: 'Read' }, { cachePoint: { type: 'default' } }] },
    ]);
    expect((body.toolConfig as { tools: unknown[] }).tools[1]).toEqual({ cachePoint: { type: 'default' } });
    await expect(
      toConverseBody({ messages: [{ role: 'user', content: [{ type: 'document', document: { mediaType: 'application/zip', data: 'x' } }, { type: 'text', text: 'r' }] }] }, 'bedrock', images),
    ).rejects.toMatchObject({ param: 'messages', message: expect.stringContaining('messages[0].content[0] document type application/zip is not one bedrock takes') });
  });

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
