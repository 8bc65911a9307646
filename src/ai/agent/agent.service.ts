/**
 * The bounded tool-calling agent (docs/search-agent-mcp.md; docs/decisions.md B3, B6, B7). Each loop asks the
 * provider for one turn through AiClient (with its retries and fallback); the turn is an answer (the run
 * completes) or exactly one allowlisted action (validated, authorized, called, observed). Everything a
 * run knows about its caller is in its own AgentRunContext: runs share no mutable state.
 */
import { randomUUID } from 'node:crypto';
import type { AiClient, GenerateResponse } from '../client/ai-client';
import { InvalidRequestError, TollgateError, UnknownProviderError } from '../errors';
import { type AgentTurn, parseAgentTurn, type ParseTurnOptions } from './agent-action.parser';
import {
  agentToolDefinitions,
  NATIVE_AGENT_SYSTEM_PROMPT,
  type NativeTranscriptTurn,
  parseNativeTurn,
  renderNativeMessages,
} from './agent-native-protocol';
import { AgentProtocolError } from './agent-errors';
import type { AgentLimits } from './agent-limits';
import { type Observation, serializeObservation } from './agent-observation';
import { traceOperation } from '../../common/traced-operation';
import { emitAgentEvent, type AgentTelemetryEvent, type AgentTelemetryHook } from './agent-telemetry';
import type { AgentAuthorizer, AgentRunContext } from './agent-tool.interface';
import type { AgentToolset } from './agent-toolset';
import { agentSystemPrompt, renderTranscript, type ToolDescription, type TranscriptTurn } from './agent-transcript';
import { toolFailureCategory, type ToolFailureCategory } from './tool-failure-category';
import { utf8Length } from './utf8-truncate';

export interface AgentRunOptions {
  /** Allowlisted tool names for this run; an empty list means the model must answer directly. */
  tools: readonly string[];
  provider?: string;
  model?: string;
  /** At most the configured maxLoops (the default). */
  maxLoops?: number;
  /** Who is asking; copied, so later changes by the caller do not reach the run. */
  context: AgentRunContext;
  signal?: AbortSignal;
}

export interface AgentActionRecord {
  loop: number;
  tool: string;
  outcome: 'ok' | 'failed' | 'vetoed';
  /** Set when outcome is not ok. */
  error?: ToolFailureCategory;
  durationMs: number;
  truncated: boolean;
}

export interface AgentResult {
  /** The final answer; empty when the loop limit stopped the run. */
  response: string;
  provider: string;
  model: string;
  loopsRun: number;
  success: boolean;
  actions: AgentActionRecord[];
}

/**
 * How a run carries tool calls: `auto` uses the provider's native tool calling where its adapter translates
 * tools, `prompt` always uses the JSON action protocol (for servers that accept `tools` but whose model
 * handles them badly).
 */
export type AgentToolProtocol = 'auto' | 'prompt';

export interface AgentServiceOptions {
  limits: AgentLimits;
  /** Default `auto`. */
  toolProtocol?: AgentToolProtocol;
  telemetry?: readonly AgentTelemetryHook[];
  authorize?: AgentAuthorizer;
}

/** A model turn as the run loop sees it: an action knows how to enter the conversation once observed. */
type RunTurn = Extract<AgentTurn, { kind: 'answer' }> | (Extract<AgentTurn, { kind: 'action' }> & { remember(observation: string): void });

/** How a run asks for a turn and reads it; one per run, holding that run's conversation. */
interface AgentProtocol {
  ask(last: boolean): Promise<GenerateResponse>;
  parse(answer: GenerateResponse, options: ParseTurnOptions): RunTurn;
}

const CLOSING = 'Your turn: answer, or request exactly one tool.';
const LAST_CLOSING = 'This is your last turn: answer now without requesting a tool.';

export class AgentService {
  private readonly hooks: readonly AgentTelemetryHook[];

  constructor(
    private readonly client: AiClient,
    private readonly toolset: AgentToolset,
    private readonly options: AgentServiceOptions,
  ) {
    this.hooks = [...(options.telemetry ?? [])];
  }

  get limits(): AgentLimits {
    return this.options.limits;
  }

  toolNames(): string[] {
    return this.toolset.names();
  }

  run(task: string, options: AgentRunOptions): Promise<AgentResult> {
    return traceOperation({ name: 'invoke_agent', target: 'tollgate-agent' }, () => this.runLoops(task, options), (result) => ({
      'gen_ai.response.model': result.model,
      'tollgate.agent.loops_run': result.loopsRun,
      'tollgate.agent.success': result.success,
    }));
  }

  private async runLoops(task: string, options: AgentRunOptions): Promise<AgentResult> {
    const context = Object.freeze({ ...options.context });
    const base = { runId: randomUUID(), requestId: context.requestId, tenantId: context.tenantId, principal: context.principal };
    const emit = (event: Omit<AgentTelemetryEvent, 'time' | 'runId' | 'requestId' | 'tenantId' | 'principal'>) =>
      emitAgentEvent(this.hooks, { time: new Date().toISOString(), ...base, ...event });
    const maxLoops = options.maxLoops ?? this.limits.maxLoops;
    try {
      this.checkRun(task, options, maxLoops);
    } catch (error) {
      emit({ event: 'agent.init_failed', maxLoops, category: errorType(error) });
      throw error;
    }

    const started = performance.now();
    const allowlist = new Set(options.tools);
    const descriptions = this.toolset.describe(options.tools);
    const parseOptions = { allowlist, maxActionBytes: this.limits.maxActionBytes, maxResponseBytes: this.limits.maxResponseBytes };
    const actions: AgentActionRecord[] = [];
    let provider = options.provider ?? this.client.defaultProvider;
    let model = '';
    let loop = 0;
    try {
      const protocol = this.protocolFor(task, options, descriptions);
      while (loop < maxLoops) {
        loop += 1;
        const turnStarted = performance.now();
        const answer = await protocol.ask(loop === maxLoops);
        provider = answer.provider;
        model = answer.model;
        emit({ event: 'agent.iteration', provider, loop, maxLoops, durationMs: elapsed(turnStarted) });
        const turn = protocol.parse(answer, parseOptions);
        if (turn.kind === 'answer') {
          emit({ event: 'agent.completed', provider, loop, maxLoops, loopsRun: loop, durationMs: elapsed(started) });
          return { response: turn.text, provider, model, loopsRun: loop, success: true, actions };
        }
        const record = await this.callTool(turn.tool, turn.args, context, loop, options.signal);
        actions.push(record.action);
        turn.remember(record.observation);
        emit({
          event: 'agent.tool_call',
          provider,
          loop,
          maxLoops,
          tool: turn.tool,
          outcome: record.action.outcome,
          category: record.action.error,
          durationMs: record.action.durationMs,
          observationTruncated: record.action.truncated,
        });
      }
    } catch (error) {
      emit({
        event: 'agent.failed',
        provider,
        loop,
        maxLoops,
        loopsRun: loop,
        category: errorType(error),
        violation: error instanceof AgentProtocolError ? error.violation : undefined,
        durationMs: elapsed(started),
      });
      if (error instanceof AgentProtocolError) error.provider ??= provider;
      throw error;
    }
    emit({ event: 'agent.max_loops_exceeded', provider, loop, maxLoops, loopsRun: loop, durationMs: elapsed(started) });
    return { response: '', provider, model, loopsRun: loop, success: false, actions };
  }

  /**
   * Native tool calling where the requested provider translates tools for the requested model, the prompt
   * protocol otherwise (and for runs without tools). The choice holds for the whole run: a fallback provider
   * must have the same feature, which AiClient checks because the request carries the tools.
   */
  private protocolFor(task: string, options: AgentRunOptions, descriptions: ToolDescription[]): AgentProtocol {
    const call = { provider: options.provider, model: options.model, signal: options.signal };
    const limits = this.limits;
    if (options.tools.length > 0 && this.options.toolProtocol !== 'prompt' && this.client.supportsFeature('tools', call)) {
      const tools = agentToolDefinitions(descriptions);
      const turns: NativeTranscriptTurn[] = [];
      return {
        // The last turn forbids tool calls instead of asking in words, as the prompt protocol does.
        ask: (last) =>
          this.client.generateMessages(renderNativeMessages(task, turns, limits.maxContextBytes), {
            ...call,
            systemPrompt: NATIVE_AGENT_SYSTEM_PROMPT,
            tools,
            // No parallelToolCalls: false: Gemini refuses it and Ollama has no such field. The system prompt
            // asks for one call per turn and parseNativeTurn refuses more, as the prompt protocol does.
            toolChoice: last ? 'none' : 'auto',
          }),
        parse: (answer, parseOptions) => {
          const turn = parseNativeTurn(answer, parseOptions);
          if (turn.kind === 'answer') return turn;
          return { ...turn, remember: (observation) => void turns.push({ call: turn.call, text: turn.text, observation }) };
        },
      };
    }
    const systemPrompt = agentSystemPrompt(descriptions);
    const turns: TranscriptTurn[] = [];
    return {
      ask: (last) =>
        this.client.generateResponse(renderTranscript(task, turns, limits.maxContextBytes, last && options.tools.length > 0 ? LAST_CLOSING : CLOSING), [], {
          ...call,
          systemPrompt,
        }),
      parse: (answer, parseOptions) => {
        const turn = parseAgentTurn(answer.response, parseOptions);
        if (turn.kind === 'answer') return turn;
        return { ...turn, remember: (observation) => void turns.push({ action: JSON.stringify({ action: turn.tool, args: turn.args }), observation }) };
      },
    };
  }

  /** Caller errors, refused before any provider is paid for. */
  private checkRun(task: string, options: AgentRunOptions, maxLoops: number): void {
    if (typeof task !== 'string' || task.trim() === '') throw new InvalidRequestError('prompt must be a non-empty string');
    if (utf8Length(task) > this.limits.maxTaskBytes) throw new InvalidRequestError(`prompt must be at most ${this.limits.maxTaskBytes} bytes`);
    if (!Number.isInteger(maxLoops) || maxLoops < 1 || maxLoops > this.limits.maxLoops) {
      throw new InvalidRequestError(`max_loops must be an integer from 1 to ${this.limits.maxLoops}`);
    }
    if (!Array.isArray(options.tools)) throw new InvalidRequestError('tools must be an array of tool names');
    if (new Set(options.tools).size !== options.tools.length) throw new InvalidRequestError('tools must not name a tool twice');
    this.toolset.checkAllowlist(options.tools);
    const providers = this.client.providerNames();
    if (options.provider !== undefined && !providers.includes(options.provider)) {
      throw new UnknownProviderError(`unknown provider '${options.provider}' (registered: ${providers.join(', ') || 'none'})`);
    }
    if (typeof options.context?.requestId !== 'string' || options.context.requestId === '') {
      throw new TollgateError('agent runs need a request context with a requestId');
    }
  }

  private async callTool(
    tool: string,
    args: Record<string, unknown>,
    context: Readonly<AgentRunContext>,
    loop: number,
    signal: AbortSignal | undefined,
  ): Promise<{ action: AgentActionRecord; observation: string }> {
    const started = performance.now();
    const finish = (observation: Observation, outcome: AgentActionRecord['outcome'], error?: ToolFailureCategory) => {
      const { text, truncated } = serializeObservation(observation, this.limits.maxObservationBytes);
      return { action: { loop, tool, outcome, error, durationMs: elapsed(started), truncated }, observation: text };
    };
    if (!(await this.authorized(tool, args, context))) return finish({ tool, ok: false, error: 'forbidden' }, 'vetoed', 'forbidden');
    try {
      const result = await traceOperation({ name: 'execute_tool', target: tool }, () => this.toolset.call(tool, { args, context, signal }));
      return finish({ tool, ok: true, result }, 'ok');
    } catch (error) {
      signal?.throwIfAborted();
      const category = toolFailureCategory(error);
      return finish({ tool, ok: false, error: category }, 'failed', category);
    }
  }

  /** Fails closed: an authorizer that throws vetoes the call. */
  private async authorized(tool: string, args: Record<string, unknown>, context: Readonly<AgentRunContext>): Promise<boolean> {
    if (!this.options.authorize) return true;
    try {
      return (await this.options.authorize({ tool, args, context })) === true;
    } catch {
      return false;
    }
  }
}

function elapsed(since: number): number {
  return Math.round((performance.now() - since) * 1000) / 1000;
}

function errorType(error: unknown): string {
  return error instanceof TollgateError ? error.type : 'internal_error';
}
