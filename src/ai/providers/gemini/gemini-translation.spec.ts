import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidRequestError, InvalidResponseError, ProviderError } from '../../errors';
import type { ChatMessage, ContentPart, GenerateRequest } from '../ai-provider.interface';
import { mapGeminiFinishReason } from './gemini-finish-reason';
import type { ImageInliner } from '../image-downloads';
import type { FetchedImage } from '../image-fetch';
import { convertGeminiMessages, PLACEHOLDER_THOUGHT_SIGNATURE } from './gemini-messages';
import { convertGeminiResponseFormat } from './gemini-response-format';
import { convertGeminiResponse } from './gemini-response';
import { GeminiStreamTranslator } from './gemini-stream';
import { convertGeminiTools } from './gemini-tools';
import { convertGeminiUsage } from './gemini-usage';
import { toGeminiGenerateBody } from './gemini.provider';

const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'gemini');
const fixtureJson = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
/** The `data:` payloads of a recorded SSE stream, in order. */
const fixtureEvents = (name: string): Array<Record<string, unknown>> =>
  readFileSync(join(FIXTURES, name), 'utf8')
    .split('\r\n\r\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => JSON.parse(frame.slice('data: '.length)));

/** An inliner that replaces each image URL with what `fetchImage` answers for it, as the downloader does. */
const inlinerOf = (fetchImage: (url: string) => Promise<FetchedImage>): ImageInliner => ({
  inline: (messages) =>
    Promise.all(
      messages.map(async (message): Promise<ChatMessage> => {
        if (message.role !== 'user' || typeof message.content === 'string') return message;
        const content = await Promise.all(
          message.content.map(async (part): Promise<ContentPart> =>
            part.type === 'image' && part.image.kind === 'url' ? { ...part, image: { kind: 'base64', ...(await fetchImage(part.image.url)) } } : part,
          ),
        );
        return { role: 'user', content };
      }),
    ),
});
const noFetch = inlinerOf(() => Promise.reject(new Error('no fetch expected')));
const CALL_ID = /^call_[0-9a-f]{24}$/;

describe('convertGeminiMessages', () => {
  const weatherCall = { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' };
  const timeCall = { id: 'call_b', name: 'get_time', arguments: '' };

  it('maps a tool-calling conversation: model functionCall parts, consecutive results grouped in one user turn', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather and time?' },
      { role: 'assistant', content: null, toolCalls: [weatherCall, timeCall] },
      { role: 'tool', toolCallId: 'call_a', content: '{"temp":21}' },
      { role: 'tool', toolCallId: 'call_b', content: 'Error: clock unavailable' },
      { role: 'user', content: 'Thanks' },
    ];
    expect(await convertGeminiMessages(messages, 'gemini', noFetch)).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather and time?' }] },
        {
          role: 'model',
          parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
            { functionResponse: { name: 'get_time', response: { content: 'Error: clock unavailable' } } },
          ],
        },
        { role: 'user', parts: [{ text: 'Thanks' }] },
      ],
    });
  });

  it('keeps assistant text beside its calls and takes "{}" as empty arguments', async () => {
    const { contents } = await convertGeminiMessages(
      [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'x', name: 'now', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'x', content: '[1,2]' },
      ],
      'gemini',
      noFetch,
    );
    expect(contents.slice(1)).toEqual([
      { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'now', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'now', response: { content: '[1,2]' } } }] },
    ]);
  });

  it.each([
    ['not JSON', '{"city":', 'messages[1].tool_calls[0].function.arguments is not valid JSON'],
    ['not an object', '[1]', 'messages[1].tool_calls[0].function.arguments is not a JSON object'],
  ])('refuses arguments that are %s, naming the field', async (_what, args, message) => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'x', name: 'now', arguments: args }] },
    ];
    await expect(convertGeminiMessages(messages, 'gemini', noFetch)).rejects.toThrow(new InvalidRequestError(`gemini: ${message}`));
  });

  it('refuses a tool result answering no earlier call, and an empty assistant message', async () => {
    await expect(
      convertGeminiMessages([{ role: 'user', content: 'Hi' }, { role: 'tool', toolCallId: 'nope', content: 'x' }], 'gemini', noFetch),
    ).rejects.toThrow(/messages\[1\]\.tool_call_id answers no tool call/);
    await expect(
      convertGeminiMessages([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: null }], 'gemini', noFetch),
    ).rejects.toThrow(InvalidRequestError);
  });

  it('inlines base64 images and fetches URL images through the image fetcher', async () => {
    const fetched: string[] = [];
    const fetchImage = inlinerOf(async (url) => {
      fetched.push(url);
      return { mediaType: 'image/jpeg', data: '/9j/4AAQ' };
    });
    const { contents } = await convertGeminiMessages(
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', image: { kind: 'url', url: 'https://example.com/cat.jpg' }, detail: 'auto' },
          ],
        },
      ],
      'gemini',
      fetchImage,
    );
    expect(contents).toEqual([
      {
        role: 'user',
        parts: [{ text: 'Compare' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }, { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } }],
      },
    ]);
    expect(fetched).toEqual(['https://example.com/cat.jpg']);
  });

  it('refuses an image detail other than auto, naming it', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: [{ type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'AA==' }, detail: 'high' }] },
    ];
    await expect(convertGeminiMessages(messages, 'gemini', noFetch)).rejects.toThrow(/messages\[0\]\.content\[0\]\.image_url\.detail 'high'/);
    const byUrl: ChatMessage[] = [
      { role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'https://example.com/cat.png' } }, { type: 'image', image: { kind: 'url', url: 'https://example.com/dog.png' }, detail: 'low' }] },
    ];
    // Refused before any download: noFetch would reject with its own message.
    await expect(convertGeminiMessages(byUrl, 'gemini', noFetch)).rejects.toThrow(/messages\[0\]\.content\[1\]\.image_url\.detail 'low'/);
  });

  it('refuses an image type Gemini does not take (a data: URL or a downloaded GIF), naming the part', async () => {
    const svg: ChatMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image', image: { kind: 'base64', mediaType: 'image/svg+xml', data: 'PHN2Zz4=' } }] }];
    await expect(convertGeminiMessages(svg, 'gemini', noFetch)).rejects.toThrow(
      new InvalidRequestError('gemini: messages[0].content[1].image_url: gemini takes images of type image/png, image/jpeg, image/webp, image/heic, image/heif, not image/svg+xml'),
    );
    const gif: ChatMessage[] = [{ role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'https://example.com/a.gif' } }] }];
    await expect(convertGeminiMessages(gif, 'gemini', inlinerOf(async () => ({ mediaType: 'image/gif', data: 'R0lGODlh' })))).rejects.toThrow(/not image\/gif/);
    const heic: ChatMessage[] = [{ role: 'user', content: [{ type: 'image', image: { kind: 'base64', mediaType: 'image/heic', data: 'AAAA' } }] }];
    await expect(convertGeminiMessages(heic, 'gemini', noFetch)).resolves.toMatchObject({ contents: [{ parts: [{ inlineData: { mimeType: 'image/heic' } }] }] });
  });
});

describe('convertGeminiTools', () => {
  const tools = [
    { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
    { name: 'get_time' },
  ];
  const request = (extra: Partial<GenerateRequest>): GenerateRequest => ({ messages: [], tools, ...extra });

  it('declares functions with their JSON Schema untouched in parametersJsonSchema', () => {
    expect(convertGeminiTools(request({}), 'gemini')).toEqual({
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather', parametersJsonSchema: tools[0].parameters }, { name: 'get_time' }] }],
    });
  });

  it.each([
    ['auto', { mode: 'AUTO' }],
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
    [{ name: 'get_time' }, { mode: 'ANY', allowedFunctionNames: ['get_time'] }],
  ] as const)('maps tool choice %j to functionCallingConfig', (toolChoice, config) => {
    expect(convertGeminiTools(request({ toolChoice }), 'gemini').toolConfig).toEqual({ functionCallingConfig: config });
  });

  it('refuses a named tool choice outside the tools, a forced call without tools, and parallel_tool_calls false', () => {
    expect(() => convertGeminiTools(request({ toolChoice: { name: 'other' } }), 'gemini')).toThrow(/tool_choice names 'other'/);
    expect(() => convertGeminiTools({ messages: [], toolChoice: 'required' }, 'gemini')).toThrow(/tool_choice requires a tool call/);
    expect(() => convertGeminiTools(request({ parallelToolCalls: false }), 'gemini')).toThrow(/parallel_tool_calls/);
    expect(convertGeminiTools({ messages: [], toolChoice: 'none' }, 'gemini')).toEqual({});
  });
});

describe('convertGeminiResponseFormat', () => {
  it('maps json_object and json_schema to responseMimeType and responseJsonSchema', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    expect(convertGeminiResponseFormat({ type: 'text' })).toEqual({});
    expect(convertGeminiResponseFormat({ type: 'json_object' })).toEqual({ responseMimeType: 'application/json' });
    expect(convertGeminiResponseFormat({ type: 'json_schema', name: 'reply', schema, strict: true })).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(convertGeminiResponseFormat({ type: 'json_schema', name: 'reply', schema, description: 'One answer' }).responseJsonSchema).toEqual({
      ...schema,
      description: 'One answer',
    });
  });
});

describe('mapGeminiFinishReason', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['IMAGE_SAFETY', false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'MALFORMED_FUNCTION_CALL'],
    ['OTHER', false, 'OTHER'],
    [undefined, false, undefined],
    ['stop <script>', false, undefined],
  ])('%s (calls: %s) is %s', (reason, hasCalls, expected) => {
    expect(mapGeminiFinishReason(reason, hasCalls)).toBe(expected);
  });
});

describe('convertGeminiUsage', () => {
  it('counts thinking tokens as output and reports cached and reasoning tokens', () => {
    expect(convertGeminiUsage({ promptTokenCount: 112, candidatesTokenCount: 31, totalTokenCount: 187, cachedContentTokenCount: 64, thoughtsTokenCount: 44 })).toEqual({
      inputTokens: 112,
      outputTokens: 75,
      totalTokens: 187,
      cachedInputTokens: 64,
      reasoningTokens: 44,
    });
    expect(convertGeminiUsage({ promptTokenCount: 5, totalTokenCount: 5 })).toEqual({ inputTokens: 5, totalTokens: 5 });
    expect(convertGeminiUsage({})).toBeUndefined();
  });
});

describe('convertGeminiResponse', () => {
  it('reads text, two function calls with made ids, tool_calls and usage from a recorded answer', () => {
    const result = convertGeminiResponse(fixtureJson('generate-function-calls.json'), 'gemini', 'gemini-2.5-flash');
    expect(result).toEqual({
      text: 'Let me check both cities.',
      model: 'gemini-2.5-flash',
      finishReason: 'tool_calls',
      usage: { inputTokens: 112, outputTokens: 75, totalTokens: 187, cachedInputTokens: 64, reasoningTokens: 44 },
      toolCalls: [
        { id: expect.stringMatching(CALL_ID), name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
        { id: expect.stringMatching(CALL_ID), name: 'get_time', arguments: '{}' },
      ],
    });
    expect(result.toolCalls?.[0].id).not.toBe(result.toolCalls?.[1].id);
  });

  it('carries a Gemini 3 thought signature inside the call id, and the replayed call turn gets it back', async () => {
    const result = convertGeminiResponse(fixtureJson('generate-signed-function-call.json'), 'gemini', 'gemini-3-pro-preview');
    const signature = 'CtwCAVSoXO5cKzVSnEsf0YbXUJ8CqGHkZQ1fT0Ng+2Yx0h7zP6k/3mXvYb9c==';
    const [signed, unsigned] = result.toolCalls ?? [];
    expect(signed.id.split('__thought__')).toEqual([expect.stringMatching(CALL_ID), signature]);
    expect(unsigned.id).toMatch(CALL_ID);
    expect(result).toMatchObject({ finishReason: 'tool_calls', usage: { outputTokens: 151, reasoningTokens: 127 } });
    const { contents } = await convertGeminiMessages(
      [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: null, toolCalls: result.toolCalls }],
      'gemini',
      noFetch,
    );
    expect(contents[1]).toEqual({
      role: 'model',
      parts: [
        { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: signature },
        { functionCall: { name: 'get_weather', args: { city: 'Berlin' } } },
      ],
    });
  });

  it("keeps Gemini's own call id when it sends one", () => {
    const body = { candidates: [{ content: { parts: [{ functionCall: { id: 'fc-1', name: 'now' } }] }, finishReason: 'STOP' }] };
    expect(convertGeminiResponse(body, 'gemini', 'm').toolCalls).toEqual([{ id: 'fc-1', name: 'now', arguments: '{}' }]);
  });

  it('refuses a function call without a name or with arguments that are not an object', () => {
    const call = (functionCall: unknown) => ({ candidates: [{ content: { parts: [{ functionCall }] }, finishReason: 'STOP' }] });
    expect(() => convertGeminiResponse(call({ args: {} }), 'gemini', 'm')).toThrow(InvalidResponseError);
    expect(() => convertGeminiResponse(call({ name: 'now', args: '{}' }), 'gemini', 'm')).toThrow(InvalidResponseError);
  });
});

describe('GeminiStreamTranslator', () => {
  it('emits one whole delta per call, indexes in order across events, and tool_calls with usage at the end', () => {
    const translator = new GeminiStreamTranslator('gemini', 'gemini-2.5-flash');
    const chunks = fixtureEvents('stream-function-calls.sse').map((event) => translator.event(event));
    expect(chunks).toEqual([
      { done: false, text: 'Checking' },
      {
        done: false,
        text: '',
        toolCalls: [
          { index: 0, id: expect.stringMatching(CALL_ID), name: 'get_weather', arguments: '{"city":"Paris"}' },
          { index: 1, id: expect.stringMatching(CALL_ID), name: 'get_weather', arguments: '{"city":"Berlin"}' },
        ],
      },
      { done: false, text: '', toolCalls: [{ index: 2, id: expect.stringMatching(CALL_ID), name: 'get_time', arguments: '{}' }] },
    ]);
    expect(translator.finish()).toEqual({
      done: true,
      model: 'gemini-2.5-flash',
      finishReason: 'tool_calls',
      usage: { inputTokens: 98, outputTokens: 52, totalTokens: 150, cachedInputTokens: 32, reasoningTokens: 25 },
    });
  });

  it('maps an error event after the 200 by its code', () => {
    const translator = new GeminiStreamTranslator('gemini', 'gemini-2.5-flash');
    const [text, failure] = fixtureEvents('stream-error-event.sse');
    expect(translator.event(text)).toEqual({ done: false, text: 'The answer' });
    expect(() => translator.event(failure)).toThrow(expect.objectContaining({ constructor: ProviderError, status: 503 }));
  });

  it('refuses to finish a stream that never gave a finish reason', () => {
    const translator = new GeminiStreamTranslator('gemini', 'gemini-2.5-flash');
    translator.event({ candidates: [{ content: { parts: [{ text: 'par' }] } }] });
    expect(() => translator.finish()).toThrow(InvalidResponseError);
  });
});

describe('Gemini tool errors', () => {
  const messages = JSON.parse(readFileSync(join(FIXTURES, '..', 'domain', 'tool-error-messages.json'), 'utf8')) as ChatMessage[];

  it("puts a failed tool's text under the response's error key, a successful result stays the response", async () => {
    const { contents } = await convertGeminiMessages(messages, 'gemini', noFetch);
    expect(contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
        { functionResponse: { name: 'get_time', response: { error: 'unknown time zone: Atlantis' } } },
      ],
    });
  });

  it('keeps a failed tool result that is a JSON object as the error object', async () => {
    const failed = messages.map((message) => (message.role === 'tool' && message.isError ? { ...message, content: '{"code":"ZONE","retry":false}' } : message));
    const { contents } = await convertGeminiMessages(failed, 'gemini', noFetch);
    expect(contents[2].parts[1]).toEqual({ functionResponse: { name: 'get_time', response: { error: { code: 'ZONE', retry: false } } } });
  });
});

describe('placeholder thought signatures', () => {
  const fromAnotherProvider: ChatMessage[] = [
    { role: 'user', content: 'Weather in Paris and Berlin?' },
    {
      role: 'assistant',
      content: 'Checking.',
      toolCalls: [
        { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'toolu_2', name: 'get_weather', arguments: '{"city":"Berlin"}' },
      ],
    },
    { role: 'tool', toolCallId: 'toolu_1', content: '18C' },
    { role: 'tool', toolCallId: 'toolu_2', content: '12C' },
  ];
  const request: GenerateRequest = { messages: fromAnotherProvider };

  it("gives the first call of an unsigned call turn Google's placeholder on Gemini 3 models and the -latest aliases", async () => {
    for (const model of ['gemini-3-pro-preview', 'gemini-3-flash-preview', 'gemini-flash-latest']) {
      const { contents } = await toGeminiGenerateBody(request, model, 'gemini', noFetch);
      expect(contents[1].parts).toEqual([
        { text: 'Checking.' },
        { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: PLACEHOLDER_THOUGHT_SIGNATURE },
        { functionCall: { name: 'get_weather', args: { city: 'Berlin' } } },
      ]);
    }
    expect(PLACEHOLDER_THOUGHT_SIGNATURE).toBe('skip_thought_signature_validator');
  });

  it('sends no placeholder to models that do not check signatures', async () => {
    for (const model of ['gemini-2.5-flash', 'gemini-2.0-flash', 'gemini-1.5-pro']) {
      const { contents } = await toGeminiGenerateBody(request, model, 'gemini', noFetch);
      expect(JSON.stringify(contents)).not.toContain('thoughtSignature');
    }
  });

  it("leaves a call turn that carries Gemini's own signature as it is", async () => {
    const signed: ChatMessage[] = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_000000000000000000000001__thought__c2lnbmVk', name: 'get_weather', arguments: '{}' }, { id: 'call_2', name: 'get_weather', arguments: '{}' }] },
    ];
    const { contents } = await toGeminiGenerateBody({ messages: signed }, 'gemini-3-pro-preview', 'gemini', noFetch);
    expect(contents[1].parts).toEqual([
      { functionCall: { name: 'get_weather', args: {} }, thoughtSignature: 'c2lnbmVk' },
      { functionCall: { name: 'get_weather', args: {} } },
    ]);
  });
});
