/**
 * An OpenAI-wire chat emulator whose answers a test scripts as a function of the conversation, for
 * agent tests: the script sees the system and user messages the adapter sent and returns the assistant's
 * text. Deciding from content (not from call order) keeps interleaved concurrent runs deterministic.
 */
import { type EmulatorServer, startEmulator } from './emulator-server';

export interface ScriptedTurn {
  system: string;
  user: string;
  model: string;
}

export type ChatScript = (turn: ScriptedTurn) => string;

export class ScriptedChatEmulator {
  script: ChatScript = () => 'no script';
  /** Every turn the emulator answered, in arrival order. */
  readonly turns: ScriptedTurn[] = [];

  private constructor(readonly server: EmulatorServer) {}

  static async start(model = 'agent-model'): Promise<ScriptedChatEmulator> {
    const emulator = new ScriptedChatEmulator(await startEmulator());
    emulator.server.route('GET', '/v1/models', () => ({ body: { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'emulator' }] } }));
    emulator.server.route('POST', '/v1/chat/completions', (req) => {
      const body = req.body as { model?: string; messages?: Array<{ role: string; content: string }> };
      if (!body || !Array.isArray(body.messages)) return { status: 400, body: { error: { message: 'messages required', type: 'invalid_request_error' } } };
      const turn = {
        system: body.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n'),
        user: body.messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n'),
        model: String(body.model),
      };
      emulator.turns.push(turn);
      const content = emulator.script(turn);
      return {
        body: {
          id: 'chatcmpl-scripted',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: turn.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        },
      };
    });
    return emulator;
  }

  get url(): string {
    return `${this.server.url}/v1`;
  }

  reset(): void {
    this.server.reset();
    this.turns.length = 0;
    this.script = () => 'no script';
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

/** The text of a fenced json action block, as a model following the protocol writes it. */
export function actionBlock(action: string, args: Record<string, unknown>): string {
  return `I will use a tool.\n\`\`\`json\n${JSON.stringify({ action, args })}\n\`\`\``;
}

/** Observations in the user message, parsed (the transcript puts each one on the line after `Observation:`). */
export function observationsIn(user: string): Array<Record<string, unknown>> {
  return [...user.matchAll(/Observation:\n(.*)\n/g)].map((match) => JSON.parse(match[1]));
}
