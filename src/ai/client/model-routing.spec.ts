import { InvalidRequestError, ModelNotFoundError, TollgateError, UnknownProviderError } from '../errors';
import type { ProviderSettings } from '../providers/ai-provider.interface';
import { ModelRouter } from './model-routing';
import { ProviderRegistry } from './provider-registry';

const settings: ProviderSettings[] = [
  { name: 'openai', kind: 'openai', apiKey: 'k', chatModel: 'gpt-4o', embeddingModel: 'text-embedding-3-small', models: ['gpt-4o-mini'], timeoutMs: 1000 },
  { name: 'anthropic', kind: 'anthropic', apiKey: 'k', chatModel: 'claude-sonnet-4-5', timeoutMs: 1000 },
  { name: 'local', kind: 'openai_compatible', url: 'http://127.0.0.1:9/v1', chatModel: 'gpt-4o-mini', timeoutMs: 1000 },
  { name: 'huggingface', kind: 'huggingface', apiKey: 'k', chatModel: 'meta-llama/Llama-3.1-8B-Instruct', timeoutMs: 1000 },
];
const registry = ProviderRegistry.fromSettings(settings);
const aliases = { chat: ['anthropic/claude-sonnet-4-5', 'openai/gpt-4o'], fast: ['openai/gpt-4o-mini', 'local/gpt-4o-mini'] };
const router = new ModelRouter(registry, 'anthropic', aliases);

function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('ModelRouter', () => {
  it('no model: the named or default provider, with the configured fallback list (no equivalents)', () => {
    expect(router.route(undefined, undefined)).toEqual({ target: { provider: 'anthropic' } });
    expect(router.route('openai', undefined)).toEqual({ target: { provider: 'openai' } });
  });

  it('an alias: its first target, the rest as equivalents in order', () => {
    expect(router.route(undefined, 'chat')).toEqual({
      target: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
      equivalents: [{ provider: 'openai', model: 'gpt-4o' }],
    });
  });

  it('provider/model: that provider, with the equivalents of every alias listing it', () => {
    expect(router.route(undefined, 'openai/gpt-4o')).toEqual({
      target: { provider: 'openai', model: 'gpt-4o' },
      equivalents: [{ provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    });
    expect(router.route(undefined, 'openai/o3')).toEqual({ target: { provider: 'openai', model: 'o3' }, equivalents: [] });
    expect(router.route(undefined, 'huggingface/meta-llama/Llama-3.3-70B-Instruct').target).toEqual({
      provider: 'huggingface',
      model: 'meta-llama/Llama-3.3-70B-Instruct',
    });
  });

  it('a bare configured model: the providers naming it, default first, then registration order', () => {
    expect(router.route(undefined, 'gpt-4o-mini')).toEqual({
      target: { provider: 'openai', model: 'gpt-4o-mini' },
      equivalents: [{ provider: 'local', model: 'gpt-4o-mini' }],
    });
    expect(router.route(undefined, 'text-embedding-3-small').target).toEqual({ provider: 'openai', model: 'text-embedding-3-small' });
    expect(router.route(undefined, 'meta-llama/Llama-3.1-8B-Instruct').target).toEqual({
      provider: 'huggingface',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
    });
  });

  it('a model nobody serves, or an unregistered prefix, is model_not_found naming the way out', () => {
    for (const model of ['gpt-9', 'nosuchprovider/x', 'meta-llama/Unlisted']) {
      const error = thrown(() => router.route(undefined, model));
      expect(error).toBeInstanceOf(ModelNotFoundError);
      expect((error as Error).message).toContain(`model '${model}' is not served by any configured provider`);
      expect((error as Error).message).toContain('openai, anthropic, local, huggingface');
    }
  });

  it('an explicit provider keeps the model as given; an unknown provider is unknown_provider', () => {
    expect(router.route('local', 'anything/at-all').target).toEqual({ provider: 'local', model: 'anything/at-all' });
    expect(thrown(() => router.route('nope', 'x'))).toBeInstanceOf(UnknownProviderError);
  });

  it('a provider with nothing after the slash is refused', () => {
    expect(thrown(() => router.route(undefined, 'openai/'))).toMatchObject({ type: 'invalid_request', param: 'model' });
  });

  it('an alias target on an unregistered provider fails at construction, naming the key', () => {
    const error = thrown(() => new ModelRouter(registry, 'openai', { bad: ['openai/gpt-4o', 'azure/gpt-4o'] }));
    expect(error).toBeInstanceOf(TollgateError);
    expect((error as Error).message).toMatch(/^ai\.model_aliases\.bad\[1\]: 'azure\/gpt-4o'/);
  });

  it('servesModel reads the configuration only', () => {
    expect(router.servesModel('local', 'gpt-4o-mini')).toBe(true);
    expect(router.servesModel('anthropic', 'gpt-4o-mini')).toBe(false);
  });

  it('an alias with deployments: its targets in order, with the group its strategy chooses from', () => {
    const withDeployments = new ModelRouter(registry, 'openai', {
      spread: { strategy: 'weighted', deployments: ['openai/gpt-4o-mini', { target: 'local/gpt-4o-mini', weight: 3, rpm: 100 }] },
    });
    const route = withDeployments.route(undefined, 'spread');
    expect(route.target).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(route.equivalents).toEqual([{ provider: 'local', model: 'gpt-4o-mini' }]);
    expect(route.deployments?.strategy).toBe('weighted');
    expect(route.deployments?.deployments.map((deployment) => deployment.settings)).toEqual([
      { provider: 'openai', model: 'gpt-4o-mini', weight: 1 },
      { provider: 'local', model: 'gpt-4o-mini', weight: 3, rpm: 100 },
    ]);
    expect(withDeployments.deploymentGroups()).toHaveLength(1);
    // A plain alias has no group: ordered fallback as before.
    expect(router.route(undefined, 'chat').deployments).toBeUndefined();
  });

  it('a deployment on an unregistered provider fails at construction, naming the entry', () => {
    const error = thrown(() => new ModelRouter(registry, 'openai', { spread: { deployments: ['openai/gpt-4o', { target: 'azure/gpt-4o' }] } }));
    expect((error as Error).message).toMatch(/^ai\.model_aliases\.spread\.deployments\[1\]: 'azure\/gpt-4o'/);
  });
});
