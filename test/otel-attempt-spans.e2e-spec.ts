/**
 * The attempt spans of src/observability/otel/traced-provider.ts around a real adapter (OpenAI's) talking to the
 * OpenAI emulator, recorded by the SDK's in-memory exporter: the traceparent the upstream receives, prompts and
 * answers only with capture_content (images named, never their data), a stream stopped by its consumer marked
 * cut, and a refused attempt marked with its error type and no upstream text.
 */
import { context, defaultTextMapSetter, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { createProvider } from '../src/ai/providers/provider-factory';
import type { AiProvider, ChatMessage } from '../src/ai/providers/ai-provider.interface';
import { CallScopeContextManager } from '../src/observability/otel/call-scope-context-manager';
import { tracedProvider } from '../src/observability/otel/traced-provider';
import { setTraceContextInjector } from '../src/upstream/trace-context-headers';
import { OpenAiEmulator } from './emulators/openai-emulator';

const KEY = 'sk-attempt-spans-KEY-1209';
const IMAGE_DATA = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let emulator: OpenAiEmulator;
let inner: AiProvider;
const exporter = new InMemorySpanExporter();
const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = tracerProvider.getTracer('test');
const contexts = new CallScopeContextManager();

beforeAll(async () => {
  emulator = await OpenAiEmulator.start({ apiKey: KEY });
  inner = createProvider({ name: 'openai', kind: 'openai', url: emulator.url, apiKey: KEY, chatModel: 'gpt-test', timeoutMs: 5000 });
  // Tollgate's context manager, as the server's runtime registers it.
  tracerProvider.register({ contextManager: contexts });
  const propagator = new W3CTraceContextPropagator();
  setTraceContextInjector((headers) => propagator.inject(context.active(), headers, defaultTextMapSetter));
});

afterAll(async () => {
  setTraceContextInjector(undefined);
  trace.disable();
  context.disable();
  propagation.disable();
  await Promise.all([inner.close(), emulator.close(), tracerProvider.shutdown()]);
});

beforeEach(() => {
  exporter.reset();
  emulator.server.reset();
});

const messages: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: [{ type: 'text', text: 'What is in it?' }, { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: IMAGE_DATA } }] },
];

describe('attempt spans around a real adapter', () => {
  it('without capture_content: the GenAI attributes, no message text; the upstream gets the attempt span as parent', async () => {
    const provider = tracedProvider(inner, { tracer, contexts, captureContent: false });
    const parent = tracer.startSpan('request');
    await context.with(trace.setSpan(context.active(), parent), () => provider.generate({ messages: [{ role: 'user', content: 'secret prompt' }] }));
    parent.end();
    const [attempt] = exporter.getFinishedSpans().filter((span) => span.name === 'chat gpt-test');
    expect(attempt.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(attempt.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-test', 'gen_ai.response.model': 'gpt-test' });
    expect(Object.keys(attempt.attributes).filter((key) => key.includes('messages'))).toEqual([]);
    expect(JSON.stringify(attempt.attributes)).not.toContain('secret prompt');
    expect(emulator.server.lastRequest?.headers.traceparent).toBe(`00-${parent.spanContext().traceId}-${attempt.spanContext().spanId}-01`);
  });

  it('with capture_content: input and output messages in the conventions\u2019 format, the image named but not its data', async () => {
    const provider = tracedProvider(inner, { tracer, contexts, captureContent: true });
    const result = await provider.generate({ messages });
    const [attempt] = exporter.getFinishedSpans();
    const input = JSON.parse(String(attempt.attributes['gen_ai.input.messages']));
    expect(input).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'What is in it?' }, { type: 'image' }] },
    ]);
    expect(JSON.parse(String(attempt.attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: result.text }], finish_reason: 'stop' }]);
    expect(JSON.stringify(attempt.attributes)).not.toContain(IMAGE_DATA.slice(0, 24));
  });

  it('a stream its consumer stops early ends its span marked cut; a full one with its first-chunk time', async () => {
    const provider = tracedProvider(inner, { tracer, contexts, captureContent: false });
    for await (const chunk of provider.generateStream!({ messages: [{ role: 'user', content: 'a long answer please' }] })) {
      if (!chunk.done) break;
    }
    for await (const chunk of provider.generateStream!({ messages: [{ role: 'user', content: 'whole' }] })) void chunk;
    const [cut, whole] = exporter.getFinishedSpans();
    expect(cut.attributes).toMatchObject({ 'gen_ai.request.stream': true, 'tollgate.stream.cut': true });
    expect(whole.attributes['tollgate.stream.cut']).toBeUndefined();
    expect(whole.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    expect(whole.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
  });

  it('a refused attempt: ERROR with the error type, never the upstream body', async () => {
    emulator.serverErrorNext(503);
    const provider = tracedProvider(inner, { tracer, contexts, captureContent: false });
    await expect(provider.generate({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toThrow();
    const [attempt] = exporter.getFinishedSpans();
    expect(attempt.status).toEqual({ code: 2, message: attempt.attributes['error.type'] });
    expect(typeof attempt.attributes['error.type']).toBe('string');
    expect(JSON.stringify({ attributes: attempt.attributes, status: attempt.status, events: attempt.events })).not.toContain('overloaded');
  });
});
