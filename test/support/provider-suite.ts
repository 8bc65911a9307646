import { ConnectionError, TimeoutError } from '../../src/ai/errors';
import type { AiProvider, ProviderSettings } from '../../src/ai/providers/ai-provider.interface';
import { createProvider } from '../../src/ai/providers/provider-factory';
import type { EmulatorServer } from '../emulators/emulator-server';
import { expectSanitized, trackedProviders } from './provider-specs';

/** What every provider emulator offers: its scriptable server, its base URL, and a way to stop it. */
export interface ProviderEmulator {
  server: EmulatorServer;
  url: string;
  close(): Promise<void>;
}

export interface ProviderSuiteOptions<E extends ProviderEmulator, P extends AiProvider> {
  start: () => Promise<E>;
  /** The adapter under test, built from the suite's settings. */
  build: (settings: ProviderSettings) => P;
  /** The registration every test starts from; a test overrides what it needs. */
  settings: (emulator: E) => ProviderSettings;
  /** What no error message may carry: the emulator's body marker and the key. */
  secrets: string[];
  /** Puts the emulator's own options back after each test (the server's script is reset anyway). */
  resetOptions?: (emulator: E) => void;
}

export interface ProviderSuite<E extends ProviderEmulator, P extends AiProvider> {
  /** Started in beforeAll, so read it inside tests only. */
  readonly emulator: E;
  /** Builds the adapter against the emulator; closed after the test. */
  create(overrides?: Partial<ProviderSettings>): P;
  readonly secrets: string[];
  /** The smallest valid generate request. */
  readonly ask: { messages: Array<{ role: 'user'; content: string }> };
  /** The registration without overrides, for the factory. */
  settings(): ProviderSettings;
  /** A second emulator of the kind, stopped again: its URL refuses connections. */
  deadUrl(): Promise<string>;
}

/**
 * The set-up each native adapter's spec shares: one emulator for the file, adapters built against it and
 * closed after each test, the emulator reset between tests, and the secrets its messages must not carry.
 */
export function providerSuite<E extends ProviderEmulator, P extends AiProvider>(options: ProviderSuiteOptions<E, P>): ProviderSuite<E, P> {
  let emulator: E | undefined;
  const providers = trackedProviders<P>();
  const started = (): E => {
    if (!emulator) throw new Error('the provider suite emulator is read before beforeAll started it');
    return emulator;
  };

  beforeAll(async () => {
    emulator = await options.start();
  });
  afterEach(async () => {
    started().server.reset();
    options.resetOptions?.(started());
    await providers.closeAll();
  });
  afterAll(() => started().close());

  return {
    get emulator() {
      return started();
    },
    create: (overrides = {}) => providers.track(options.build({ ...options.settings(started()), ...overrides })),
    secrets: options.secrets,
    ask: { messages: [{ role: 'user', content: 'Hi' }] },
    settings: () => options.settings(started()),
    deadUrl: async () => {
      const gone = await options.start();
      await gone.close();
      return gone.url;
    },
  };
}

/**
 * Tests every native adapter passes the same way, whatever its wire format: transport failures (on embed too
 * when the adapter embeds), health with the server down, and its registration in the factory.
 */
export function describeSharedProviderBehaviour<E extends ProviderEmulator, P extends AiProvider>(
  suite: ProviderSuite<E, P>,
  adapter: abstract new (...args: never[]) => P,
  options: { embeds: boolean },
): void {
  const calls: Array<[string, (provider: P) => Promise<unknown>]> = [['generate', (provider) => provider.generate(suite.ask)]];
  if (options.embeds) calls.push(['embed', (provider) => provider.embed({ inputs: ['a'] })]);

  describe('shared provider behaviour', () => {
    it.each(calls)('maps a connection reset during %s to ConnectionError', async (_name, call) => {
      suite.emulator.server.resetNext();
      await expectSanitized(call(suite.create()), ConnectionError, suite.secrets);
    });

    it.each(calls)('maps a slow upstream during %s to TimeoutError and aborts the upstream request', async (_name, call) => {
      suite.emulator.server.delayNext(Infinity);
      await expectSanitized(call(suite.create({ timeoutMs: 150 })), TimeoutError, suite.secrets);
      await suite.emulator.server.waitForAbort();
      expect(suite.emulator.server.lastRequest?.aborted).toBe(true);
    });

    it('maps a refused connection to ConnectionError', async () => {
      await expectSanitized(suite.create({ url: await suite.deadUrl() }).generate(suite.ask), ConnectionError, suite.secrets);
    });

    it('is unavailable in health when the server is down', async () => {
      const health = await suite.create({ url: await suite.deadUrl() }).healthCheck();
      expect(health).toMatchObject({ status: 'unavailable', reachable: false, ready: false });
    });

    it('is registered in the provider factory', async () => {
      const provider = createProvider({ ...suite.settings(), name: 'by-factory' });
      try {
        expect(provider).toBeInstanceOf(adapter);
        expect(provider.name).toBe('by-factory');
      } finally {
        await provider.close();
      }
    });
  });
}
