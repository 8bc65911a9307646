/**
 * The domain's answers in Gemini's shapes: GenerateContentResponse (one candidate), usageMetadata, finish
 * reasons, the model list and one model, the countTokens answer.
 */
import { randomBytes } from 'node:crypto';
import type { ModelInfo, TokenUsage, ToolCall } from '../../providers/ai-provider.interface';
import { THOUGHT_SIGNATURE_SEPARATOR } from '../../providers/gemini/gemini-wire';

export type GeminiAnswerPart = { text: string } | { functionCall: { name: string; args: Record<string, unknown> }; thoughtSignature?: string };

export interface GeminiUsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

/** What one answer (or one stream chunk) is made of. */
export interface GeminiAnswer {
  parts: GeminiAnswerPart[];
  finishReason?: string;
  usage?: TokenUsage;
  /** `provider/model` of whoever answered, or as asked while a stream has not said. */
  modelVersion: string;
  responseId: string;
}

/** Google's response ids are short opaque strings; this one is 16 random bytes in base64url. */
export function responseId(): string {
  return randomBytes(16).toString('base64url');
}

export function generateContentBody(answer: GeminiAnswer) {
  const usage = geminiUsage(answer.usage);
  return {
    candidates: [
      {
        content: { role: 'model' as const, parts: answer.parts },
        ...(answer.finishReason !== undefined ? { finishReason: answer.finishReason } : {}),
        index: 0,
      },
    ],
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: answer.modelVersion,
    responseId: answer.responseId,
  };
}

/** The answer's parts: its text, then its function calls, whole; an empty text part when there is neither. */
export function answerParts(text: string, toolCalls: readonly ToolCall[] | undefined): GeminiAnswerPart[] {
  const calls = (toolCalls ?? []).map(functionCallPart);
  return text !== '' || calls.length === 0 ? [{ text }, ...calls] : calls;
}

/** A domain call as Gemini's functionCall part; a signature a Gemini upstream put in the id goes back beside it. */
export function functionCallPart(call: Pick<ToolCall, 'id' | 'name' | 'arguments'>): GeminiAnswerPart {
  const signature = call.id.split(THOUGHT_SIGNATURE_SEPARATOR)[1];
  return { functionCall: { name: call.name, args: argumentsObject(call.arguments) }, ...(signature ? { thoughtSignature: signature } : {}) };
}

/** A model's arguments that are not a JSON object (a truncated answer) read as no arguments. */
function argumentsObject(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The domain's finish reasons (OpenAI's words, or a Gemini upstream's own token) in Gemini's: a call of
 * functions ends with STOP as Gemini says it, a filtered answer with SAFETY.
 */
export function geminiFinishReason(reason: string | undefined): string {
  switch (reason) {
    case undefined:
    case 'stop':
    case 'tool_calls':
      return 'STOP';
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return /^[A-Z][A-Z0-9_]*$/.test(reason) ? reason : 'OTHER';
  }
}

/**
 * Gemini counts thinking apart from the answer (`thoughtsTokenCount` beside `candidatesTokenCount`); the domain's
 * output includes reasoning, so the answer's count is output less reasoning. Cached tokens are part of the prompt
 * in both.
 */
export function geminiUsage(usage: TokenUsage | undefined): GeminiUsageMetadata | undefined {
  if (!usage) return undefined;
  const prompt = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  const thoughts = usage.reasoningTokens;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, output - (thoughts ?? 0)),
    totalTokenCount: usage.totalTokens ?? prompt + output,
    ...(usage.cachedInputTokens !== undefined ? { cachedContentTokenCount: usage.cachedInputTokens } : {}),
    ...(thoughts !== undefined ? { thoughtsTokenCount: thoughts } : {}),
  };
}

export const GENERATION_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'] as const;

/** Google's Model resource for a name as `model` in the path takes it (`models/openai/gpt-4o`, `models/fast`). */
export function modelResource(id: string, owner: string) {
  return {
    name: `models/${id}`,
    baseModelId: id,
    version: owner,
    displayName: id,
    description: `${id} through Tollgate (${owner})`,
    supportedGenerationMethods: [...GENERATION_METHODS],
  };
}

/** Provider models as `provider/model`, then the configured aliases; one page holds them all. */
export function modelsListBody(models: readonly ModelInfo[], aliases: readonly string[]) {
  return {
    models: [...models.map((model) => modelResource(`${model.provider}/${model.id}`, model.ownedBy ?? model.provider)), ...aliases.map((alias) => modelResource(alias, 'tollgate'))],
  };
}
