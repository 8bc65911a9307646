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
  /** Contents of the `tool` messages (native tool calling), in order. */
  toolResults: string[];
}

/** A native tool-calling turn: OpenAI's `message.tool_calls` with `finish_reason: "tool_calls"`. */
export interface ScriptedToolCalls {
  content?: string | null;
  toolCalls: Array<{ id?: string; name: string; arguments: string }>;
}

export type ChatScript = (turn: ScriptedTurn) => string | ScriptedToolCalls;

export class ScriptedChatEmulator {
  script: ChatScript = () => 'no script';
  /** Every turn the emulator answered, in arrival order. */
  readonly turns: ScriptedTurn[] = [];

  private constructor(readonly server: EmulatorServer) {}

  static async start(model = 'agent-model'): Promise<ScriptedChatEmulator> {
    const emulator = new ScriptedChatEmulator(await startEmulator());
    emulator.server.route('GET', '/v1/models', () => ({ body: { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'emulator' }] } }));
    emulator.server.route('POST', '/v1/chat/completions', (req) => {
      const body = req.body as { model?: string; messages?: Array<{ role: string; content: unknown }> };
      if (!body || !Array.isArray(body.messages)) return { status: 400, body: { error: { message: 'messages required', type: 'invalid_request_error' } } };
      const contentsOf = (role: string) => body.messages!.filter((m) => m.role === role).map((m) => (typeof m.content === 'string' ? m.content : ''));
      const turn = {
        system: contentsOf('system').join('\n'),
        user: contentsOf('user').join('\n'),
        model: String(body.model),
        toolResults: contentsOf('tool'),
      };
      emulator.turns.push(turn);
      const reply = emulator.script(turn);
      const message =
        typeof reply === 'string'
          ? { role: 'assistant', content: reply }
          : {
              role: 'assistant',
              content: reply.content ?? null,
              tool_calls: reply.toolCalls.map((call, index) => ({
                id: call.id ?? `call_${emulator.turns.length}_${index}`,
                type: 'function',
                function: { name: call.name, arguments: call.arguments },
              })),
            };
      return {
        body: {
          id: 'chatcmpl-scripted',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: turn.model,
          choices: [{ index: 0, message, finish_reason: typeof reply === 'string' ? 'stop' : 'tool_calls' }],
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
