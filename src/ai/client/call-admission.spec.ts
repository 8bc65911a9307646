import { ProviderRegistry } from './provider-registry';
import { admit, answeredBy, chatGate, closeUnanswered } from './call-admission';
import type { GatedCall, GateOutcome, ModelCallGate } from './model-call-gate';

const registry = ProviderRegistry.fromSettings([{ name: 'openai', kind: 'openai', apiKey: 'k', chatModel: 'gpt-4o', timeoutMs: 1000 }]);
const openai = registry.get('openai');
afterAll(() => registry.close());

/** A gate that records what it was asked and answers as told. */
function recordingGate(ticket: 'none' | 'sync' | 'async', maxOutputTokens?: number) {
  const opened: GatedCall[] = [];
  const closed: GateOutcome[] = [];
  const make = () => ({ maxOutputTokens, close: (outcome: GateOutcome) => closed.push(outcome) });
  const gate: ModelCallGate = {
    open: (call) => {
      opened.push(call);
      if (ticket === 'none') return undefined;
      return ticket === 'sync' ? make() : Promise.resolve(make());
    },
    admits: () => true,
  };
  return { gate, opened, closed };
}

describe('admit', () => {
  const gated = chatGate('generate', { maxTokens: 50 }, () => [{ role: 'user', content: 'twelve chars' }]);

  it('without a gate admits at once with no ticket', () => {
    expect(admit(undefined, openai, undefined, gated)).toEqual({});
  });

  it('tells the gate the routed provider, kind, configured model, estimate and output bound', () => {
    const { gate, opened } = recordingGate('none');
    expect(admit(gate, openai, undefined, gated)).toEqual({});
    expect(opened[0]).toMatchObject({ provider: 'openai', providerKind: 'openai', model: 'gpt-4o', operation: 'generate', maxOutputTokens: 50 });
    expect(opened[0].estimateInputTokens()).toBeGreaterThan(3);
  });

  it('answers synchronously for a synchronous ticket and watches attempts with its max_tokens', async () => {
    const { gate, closed } = recordingGate('sync', 20);
    const admission = admit(gate, openai, 'gpt-4o-mini', gated);
    expect(admission).not.toBeInstanceOf(Promise);
    const { attempts } = admission as Awaited<typeof admission>;
    await attempts!.run(openai, 'gpt-4o-mini', undefined, async (options) => {
      expect(options.maxTokens).toBe(20);
      options.onSent?.();
    });
    closeUnanswered(admission as Awaited<typeof admission>);
    expect(closed).toEqual([{ sent: true, unanswered: [] }]);
  });

  it('waits for a reserving gate', async () => {
    const { gate } = recordingGate('async');
    const admission = await admit(gate, openai, undefined, gated);
    expect(admission.ticket).toBeDefined();
  });
});

describe('answeredBy', () => {
  it('uses the upstream usage, else estimates from the text', () => {
    expect(answeredBy(openai, 'gpt-4o', { inputTokens: 7, outputTokens: 3 }, 400, 40)).toMatchObject({ model: 'gpt-4o', estimated: false, usage: { inputTokens: 7, outputTokens: 3 } });
    expect(answeredBy(openai, 'gpt-4o', undefined, 400, 40)).toMatchObject({ estimated: true, usage: { inputTokens: 100, outputTokens: 10 } });
  });
});
