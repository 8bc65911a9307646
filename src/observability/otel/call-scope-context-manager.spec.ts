import { context, ROOT_CONTEXT, type Span, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type CallContext, currentCallContext, runWithCallContext } from '../../governance/call-context';
import { CallScopeContextManager, ROOT_TRACE_CONTEXT } from './call-scope-context-manager';

const caller = (tenant: string): CallContext => ({ identity: { tenant } }) as CallContext;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('CallScopeContextManager', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('spec');

  beforeAll(() => {
    context.setGlobalContextManager(new CallScopeContextManager());
    trace.setGlobalTracerProvider(provider);
  });

  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  beforeEach(() => exporter.reset());

  const finished = (name: string): ReadableSpan => {
    const span = exporter.getFinishedSpans().find((candidate) => candidate.name === name);
    if (!span) throw new Error(`no finished span ${name}`);
    return span;
  };
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

  /** A request: a server span, then an attempt span started after awaits, each current while its work runs. */
  async function request(tenant: string, pause: number): Promise<{ server: Span; seenTenant: string | null | undefined }> {
    const server = tracer.startSpan(`server ${tenant}`);
    let seenTenant: string | null | undefined;
    await runWithCallContext(caller(tenant), () =>
      context.with(trace.setSpan(ROOT_CONTEXT, server), async () => {
        for (let i = 0; i < pause; i++) await tick();
        const attempt = tracer.startSpan(`attempt ${tenant}`);
        await context.with(trace.setSpan(context.active(), attempt), async () => {
          await tick();
          seenTenant = currentCallContext()?.identity.tenant;
          expect(trace.getActiveSpan()).toBe(attempt);
        });
        attempt.end();
        expect(trace.getActiveSpan()).toBe(server);
      }),
    );
    server.end();
    return { server, seenTenant };
  }

  it('keeps the parent span current across awaits, and the child under it', async () => {
    const { server } = await request('a', 3);
    expect(parentOf(finished('attempt a'))).toBe(server.spanContext().spanId);
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it('keeps two concurrent requests apart, spans and call contexts alike', async () => {
    const [first, second] = await Promise.all([request('first', 4), request('second', 1)]);
    expect(parentOf(finished('attempt first'))).toBe(first.server.spanContext().spanId);
    expect(parentOf(finished('attempt second'))).toBe(second.server.spanContext().spanId);
    expect(finished('attempt first').spanContext().traceId).not.toBe(finished('attempt second').spanContext().traceId);
    expect([first.seenTenant, second.seenTenant]).toEqual(['first', 'second']);
  });

  it('keeps the trace context when a call context is entered inside it, and the call context inside a trace context', async () => {
    const span = tracer.startSpan('outer');
    await context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
      runWithCallContext(caller('inner'), async () => {
        await tick();
        expect(trace.getActiveSpan()).toBe(span);
        await context.with(ROOT_CONTEXT, async () => {
          await tick();
          expect(currentCallContext()?.identity.tenant).toBe('inner');
          expect(trace.getActiveSpan()).toBeUndefined();
        });
      }),
    );
    span.end();
  });

  it('passes this and the arguments to the function it runs, and binds a function to a context', () => {
    const span = tracer.startSpan('bound');
    const target = { factor: 3 };
    expect(context.with(ROOT_CONTEXT, function (this: typeof target, value: number) { return this.factor * value; }, target, 7)).toBe(21);
    const bound = context.bind(trace.setSpan(ROOT_CONTEXT, span), () => trace.getActiveSpan());
    expect(bound()).toBe(span);
    expect(trace.getActiveSpan()).toBeUndefined();
    span.end();
  });

  it('answers for a set key its latest value, for a deleted or never set one undefined, and leaves the parent unchanged', () => {
    const [first, second] = [Symbol('first'), Symbol('second')];
    const one = ROOT_TRACE_CONTEXT.setValue(first, 1);
    const two = one.setValue(second, 2).setValue(first, 3);
    expect([two.getValue(first), two.getValue(second)]).toEqual([3, 2]);
    expect([one.getValue(first), one.getValue(second)]).toEqual([1, undefined]);
    const deleted = two.deleteValue(first);
    expect([deleted.getValue(first), deleted.getValue(second), two.getValue(first)]).toEqual([undefined, 2, 3]);
    expect(ROOT_TRACE_CONTEXT.getValue(first)).toBeUndefined();
  });

  it('makes a span current through its own contexts and run, a child under it, the traceparent from it', () => {
    const manager = new CallScopeContextManager();
    const server = tracer.startSpan('own server', {}, manager.active());
    const headers: Record<string, string> = {};
    manager.run(trace.setSpan(ROOT_TRACE_CONTEXT, server), () => {
      const attempt = tracer.startSpan('own attempt', {}, manager.active());
      manager.run(trace.setSpan(manager.active(), attempt), () => new W3CTraceContextPropagator().inject(manager.active(), headers, { set: (carrier, key, value) => (carrier[key] = value) }));
      attempt.end();
      expect(trace.getSpan(manager.active())).toBe(server);
    });
    server.end();
    expect(manager.active()).toBe(ROOT_TRACE_CONTEXT);
    const attempt = finished('own attempt');
    expect(parentOf(attempt)).toBe(server.spanContext().spanId);
    expect(headers.traceparent).toBe(`00-${attempt.spanContext().traceId}-${attempt.spanContext().spanId}-01`);
  });

  it('carries the current span into the traceparent the propagator writes', () => {
    const span = tracer.startSpan('sent');
    const headers: Record<string, string> = {};
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => new W3CTraceContextPropagator().inject(context.active(), headers, { set: (carrier, key, value) => (carrier[key] = value) }));
    expect(headers.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    span.end();
  });
});
