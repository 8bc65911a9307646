import { CapabilityNotSupportedError } from '../errors';
import { ProviderRegistry } from './provider-registry';
import { assertServes, canServe, configuredModel, requiredFeatures } from './call-features';

const registry = ProviderRegistry.fromSettings([
  { name: 'openai', kind: 'openai', apiKey: 'k', chatModel: 'gpt-4o', embeddingModel: 'text-embedding-3-small', timeoutMs: 1000 },
  { name: 'deepseek', kind: 'deepseek', apiKey: 'k', chatModel: 'deepseek-chat', timeoutMs: 1000 },
  { name: 'anthropic', kind: 'anthropic', apiKey: 'k', chatModel: 'claude-sonnet-4-5', timeoutMs: 1000 },
  { name: 'vertex', kind: 'vertex', chatModel: 'gemini-2.5-flash', timeoutMs: 1000, vertex: { project: 'p', location: 'europe-west4', accessToken: 't' } },
]);
const openai = registry.get('openai');
const deepseek = registry.get('deepseek');
const anthropic = registry.get('anthropic');
const vertex = registry.get('vertex');

afterAll(() => registry.close());

describe('requiredFeatures', () => {
  it('names tools, structured output and image input only when the request uses them', () => {
    expect(requiredFeatures({}, [{ role: 'user', content: 'hi' }])).toEqual([]);
    expect(requiredFeatures({ responseFormat: { type: 'text' } }, [])).toEqual([]);
    expect(
      requiredFeatures({ toolChoice: 'auto', responseFormat: { type: 'json_object' } }, [
        { role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'https://x/a.png' } }] },
      ]),
    ).toEqual(['tools', 'structuredOutput', 'vision']);
    expect(requiredFeatures({}, [{ role: 'tool', toolCallId: 'c1', content: 'ok' }])).toEqual(['tools']);
  });
});

describe('assertServes and canServe', () => {
  it('refuses a provider without the capability, naming provider, kind and capability', () => {
    expect(() => assertServes(deepseek, 'embeddings', [], undefined)).toThrow(new CapabilityNotSupportedError('deepseek: deepseek does not support embeddings'));
    expect(canServe(deepseek, 'embeddings', [], undefined)).toBe(false);
  });

  it('refuses a model without a needed feature, naming the model and feature', () => {
    expect(() => assertServes(deepseek, 'generate', ['vision'], undefined)).toThrow('deepseek: deepseek model deepseek-chat does not support image input');
    expect(canServe(deepseek, 'generate', ['vision'], undefined)).toBe(false);
  });

  it('a field only the dialect takes goes to a provider that speaks it; one only its own API has, to that kind alone (B16, B24)', () => {
    const server = { dialect: 'anthropic-messages' as const, body: {}, headers: {}, nativeOnly: "tools.0.type: server tool 'web_search_20250305'" };
    expect(canServe(anthropic, 'generate', [], 'claude-sonnet-4-5', server)).toBe(true);
    expect(canServe(vertex, 'generate', [], 'claude-sonnet-4-5', server)).toBe(true);
    expect(canServe(vertex, 'generate', [], 'gemini-2.5-flash', server)).toBe(false);
    expect(() => assertServes(openai, 'generate', [], 'gpt-4o', server)).toThrow(
      "tools.0.type: server tool 'web_search_20250305': only an Anthropic model takes it; model gpt-4o of provider openai (openai) does not",
    );
    const mcp = { ...server, nativeOnly: 'mcp_servers', firstPartyOnly: 'mcp_servers' };
    expect(canServe(anthropic, 'generate', [], 'claude-sonnet-4-5', mcp)).toBe(true);
    expect(canServe(vertex, 'generate', [], 'claude-sonnet-4-5', mcp)).toBe(false);
    expect(() => assertServes(vertex, 'generate', [], 'claude-sonnet-4-5', mcp)).toThrow(
      "mcp_servers: only Anthropic's own API takes it; model claude-sonnet-4-5 of provider vertex (vertex) does not",
    );
    const responses = { dialect: 'openai-responses' as const, body: {}, headers: {}, nativeOnly: "tools[0].type: 'web_search'" };
    expect(canServe(openai, 'generate', [], 'gpt-4o', responses)).toBe(true);
    expect(canServe(deepseek, 'generate', [], 'deepseek-chat', responses)).toBe(false);
  });

  it('lets a capable provider through', () => {
    expect(() => assertServes(openai, 'streaming', ['tools', 'vision'], 'gpt-4o')).not.toThrow();
    expect(canServe(openai, 'embeddings', [], undefined)).toBe(true);
  });
});

describe('configuredModel', () => {
  it('is the requested model, else the registration setting', () => {
    expect(configuredModel(openai, 'gpt-4o-mini', 'chatModel')).toBe('gpt-4o-mini');
    expect(configuredModel(openai, undefined, 'embeddingModel')).toBe('text-embedding-3-small');
    expect(configuredModel(deepseek, undefined, 'embeddingModel')).toBe('unknown');
  });
});
