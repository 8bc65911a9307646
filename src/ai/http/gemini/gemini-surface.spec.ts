import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BudgetExceededError, RateLimitExceededError } from '../../../governance/budgets/budget-errors';
import { AuthenticationError, ConnectionError, InvalidResponseError, ProviderError, RateLimitError, TimeoutError } from '../../errors';
import { convertGeminiResponse } from '../../providers/gemini/gemini-response';
import { answerParts, generateContentBody, geminiFinishReason, geminiUsage } from './gemini-answers';
import { toGeminiError } from './gemini-errors';
import { parseGenerateContentRequest } from './gemini-requests';
import { domainMessages, generationOptions, jsonSchemaOf } from './gemini-to-domain';

const fixture = (name: string): unknown => JSON.parse(readFileSync(join(__dirname, '../../../../test/fixtures/gemini', name), 'utf8'));

describe('a Gemini answer through the domain and back', () => {
  it('keeps the recorded usage (thoughts apart, no double count), the calls and their signature', () => {
    const recorded = fixture('generate-signed-function-call.json') as { candidates: Array<{ content: { parts: object[] } }>; usageMetadata: object };
    const result = convertGeminiResponse(recorded, 'gemini', 'gemini-3-pro-preview');
    const body = generateContentBody({
      parts: answerParts(result.text, result.toolCalls),
      finishReason: geminiFinishReason(result.finishReason),
      usage: result.usage,
      modelVersion: 'gemini/gemini-3-pro-preview',
      responseId: 'r',
    });
    expect(body.usageMetadata).toEqual(recorded.usageMetadata);
    expect(body.candidates[0].content.parts).toEqual(recorded.candidates[0].content.parts);
    expect(body.candidates[0].finishReason).toBe('STOP');
  });

  it('gives cached tokens as cachedContentTokenCount, a part of the prompt', () => {
    expect(geminiUsage({ inputTokens: 100, outputTokens: 10, cachedInputTokens: 60 })).toEqual({
      promptTokenCount: 100,
      candidatesTokenCount: 10,
      totalTokenCount: 110,
      cachedContentTokenCount: 60,
    });
  });
});

describe('a Gemini request in the domain', () => {
  it('matches function responses to their calls by name in order, and an error response is a failed tool', () => {
    const request = parseGenerateContentRequest({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }] },
        { role: 'model', parts: [{ text: 'thinking', thought: true }, { functionCall: { name: 'w', args: { city: 'A' } }, thoughtSignature: 'sig' }, { functionCall: { name: 'w', args: { city: 'B' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'w', response: { output: 'sunny' } } }, { functionResponse: { name: 'w', response: { error: 'down' } } }] },
      ],
    });
    expect(domainMessages(request)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'call_1_1__thought__sig', name: 'w', arguments: '{"city":"A"}' },
          { id: 'call_1_2', name: 'w', arguments: '{"city":"B"}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1_1__thought__sig', content: '{"output":"sunny"}' },
      { role: 'tool', toolCallId: 'call_1_2', content: '"down"', isError: true },
    ]);
  });

  it('refuses a function response that answers no call, naming the part', () => {
    const request = parseGenerateContentRequest({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'w', response: {} } }] }] });
    expect(() => domainMessages(request)).toThrow("'contents[0].parts[0].functionResponse' answers no functionCall");
  });

  it('maps the generation config, the function-calling modes and a Google schema', () => {
    const request = parseGenerateContentRequest({
      contents: [{ parts: [{ text: 'x' }] }],
      tools: [{ functionDeclarations: [{ name: 'a', parameters: { type: 'OBJECT', properties: { n: { type: 'INTEGER', nullable: true } }, propertyOrdering: ['n'] } }, { name: 'b' }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a', 'b'] } },
      generationConfig: { maxOutputTokens: 9, temperature: 0.1, topP: 0.5, stopSequences: ['z'], seed: 3, responseMimeType: 'application/json' },
    });
    expect(generationOptions(request)).toMatchObject({
      maxTokens: 9,
      temperature: 0.1,
      topP: 0.5,
      stop: ['z'],
      seed: 3,
      toolChoice: 'required',
      tools: [{ name: 'a', parameters: { type: 'object', properties: { n: { type: ['integer', 'null'] } } } }, { name: 'b' }],
      responseFormat: { type: 'json_object' },
    });
    expect(jsonSchemaOf({ type: 'ARRAY', items: { type: 'STRING', enum: ['x'] } })).toEqual({ type: 'array', items: { type: 'string', enum: ['x'] } });
  });

  it("takes protobuf's field names as well (Google's curl examples), keeping the keys of arguments and schemas", () => {
    const request = parseGenerateContentRequest({
      system_instruction: { parts: [{ text: 'S' }] },
      contents: [{ parts: [{ inline_data: { mime_type: 'image/png', data: 'AA==' } }] }],
      tools: [{ function_declarations: [{ name: 'f', parameters_json_schema: { type: 'object', properties: { snake_case: { type: 'string' } } } }] }],
      generation_config: { max_output_tokens: 5 },
    });
    expect(domainMessages(request)).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: [{ type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'AA==' } }] },
    ]);
    expect(generationOptions(request)).toMatchObject({ maxTokens: 5, tools: [{ name: 'f', parameters: { properties: { snake_case: { type: 'string' } } } }] });
    const camel = { contents: [{ parts: [{ text: 'x' }] }] };
    expect(parseGenerateContentRequest(camel)).toBe(camel);
  });

  it.each([
    [{ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { candidateCount: 2 } }, "'generationConfig.candidateCount'"],
    [{ contents: [{ parts: [{ text: 'x' }] }], cachedContent: 'cachedContents/1' }, 'Unknown name "cachedContent"'],
    [{ contents: [{ parts: [{ text: 'x' }] }], tools: [{ googleSearch: {} }] }, 'Unknown name "googleSearch" at \'tools[0]\''],
    [{ contents: [{ parts: [{ text: 'x', inlineData: { mimeType: 'image/png', data: 'AA==' } }] }] }, "'contents[0].parts[0]' must hold exactly one"],
  ])('refuses %j naming the field', (body, message) => {
    expect(() => domainMessages(parseGenerateContentRequest(body))).toThrow(message);
  });
});

describe("governance refusals in Google's shape", () => {
  const resetAt = new Date(Date.now() + 10 * 86_400_000);

  it('a spent monthly budget names PerMonth and a retry delay past Gemini CLI\'s five minutes', () => {
    const error = toGeminiError(new BudgetExceededError({ kind: 'key', id: 'k1', period: 'month', limit: { tokens: 5 } }, 'tokens', resetAt));
    expect(error.status).toBe(429);
    expect(error.headers['x-should-retry']).toBe('false');
    const [quota, , retry] = error.body.error.details as Array<Record<string, any>>;
    expect(quota.violations[0].quotaId).toBe('TollgateBudgetPerMonth-key');
    expect(Number(retry.retryDelay.slice(0, -1))).toBeGreaterThan(300);
  });

  it('an RPM refusal names PerMinute, which Gemini CLI retries', () => {
    const error = toGeminiError(new RateLimitExceededError({ kind: 'key', id: 'k1', period: 'minute', limit: { requests: 1 } }, 'requests', new Date(Date.now() + 30_000)));
    expect(error.body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect((error.body.error.details![0] as Record<string, any>).violations[0].quotaId).toBe('TollgateRatePerMinute-key');
  });
});

describe("upstream failures in Google's statuses, so Gemini CLI retries only what a retry can fix", () => {
  it.each(([
    ['a request the provider refused (its 400)', new ProviderError('anthropic: upstream returned 400 invalid_request_error', { provider: 'anthropic', status: 400 }), 400, 'INVALID_ARGUMENT'],
    ['a body the provider found too large (its 413)', new ProviderError('openai: upstream returned 413', { provider: 'openai', status: 413 }), 400, 'INVALID_ARGUMENT'],
    ['a prompt the provider blocked', new ProviderError('gemini: upstream blocked the prompt (SAFETY)', { provider: 'gemini', status: 400 }), 400, 'INVALID_ARGUMENT'],
    ["the gateway's credentials, refused by the provider", new AuthenticationError('openai: upstream rejected the credentials (401)', { provider: 'openai' }), 403, 'PERMISSION_DENIED'],
    ['a malformed answer', new InvalidResponseError('openai: upstream returned malformed JSON', { provider: 'openai' }), 500, 'INTERNAL'],
    ["the provider's own failure (its 500)", new ProviderError('openai: upstream returned 500', { provider: 'openai', status: 500 }), 503, 'UNAVAILABLE'],
    ['a failure mid-stream', new ProviderError('ollama: upstream failed during the stream', { provider: 'ollama' }), 503, 'UNAVAILABLE'],
    ['an unreachable provider', new ConnectionError('openai: could not reach upstream (ECONNREFUSED)', { provider: 'openai' }), 503, 'UNAVAILABLE'],
    ['a provider that did not answer in time', new TimeoutError('openai: upstream timed out (UND_ERR_HEADERS_TIMEOUT)', { provider: 'openai' }), 504, 'DEADLINE_EXCEEDED'],
    ["the provider's rate limit", new RateLimitError('openai: upstream rate limit reached (429)', { provider: 'openai' }), 429, 'RESOURCE_EXHAUSTED'],
  ] as const).map(([failure, exception, code, status]) => [`${failure} is ${code} ${status}`, exception, code, status] as const))("%s, with Tollgate's own message", (_title, exception, code, status) => {
    const error = toGeminiError(exception);
    expect(error.status).toBe(code);
    expect(error.body).toEqual({ error: { code, message: exception.message, status } });
  });
});
