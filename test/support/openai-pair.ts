import { OpenAiEmulator, type OpenAiEmulatorOptions } from '../emulators/openai-emulator';

/**
 * An OpenAI emulator registered as `openai` (first in the environment, so the default provider) and a
 * DeepSeek-flavoured one as `deepseek`, both taking the same key: the pair that the REST, CLI and
 * OpenAI-compatible specs route, fall back and fail between.
 */
export class OpenAiPair {
  private constructor(
    readonly openai: OpenAiEmulator,
    readonly deepseek: OpenAiEmulator,
    private readonly apiKey: string,
  ) {}

  /** `openai` adds to the OpenAI emulator's options (its models, say); the key is the pair's. */
  static async start(apiKey: string, openai: OpenAiEmulatorOptions = {}): Promise<OpenAiPair> {
    const [first, second] = await Promise.all([
      OpenAiEmulator.start({ ...openai, apiKey }),
      OpenAiEmulator.start({ flavour: 'deepseek', apiKey, chatModels: ['deepseek-chat'] }),
    ]);
    return new OpenAiPair(first, second, apiKey);
  }

  /** The environment that registers both, with the models the emulators serve. */
  env(): NodeJS.ProcessEnv {
    return {
      OPENAI_API_KEY: this.apiKey,
      OPENAI_URL: this.openai.url,
      OPENAI_CHAT_MODEL: 'gpt-test',
      OPENAI_EMBEDDING_MODEL: 'embed-test',
      DEEPSEEK_API_KEY: this.apiKey,
      DEEPSEEK_URL: this.deepseek.url,
      DEEPSEEK_CHAT_MODEL: 'deepseek-chat',
    };
  }

  /** Forgets the requests both have seen and any scripted failures. */
  reset(): void {
    this.openai.server.reset();
    this.deepseek.server.reset();
  }

  close(): Promise<unknown> {
    return Promise.all([this.openai.close(), this.deepseek.close()]);
  }
}
