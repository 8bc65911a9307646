import type { FinishReason } from '../ai-provider.interface';
import { enumToken } from './gemini-wire';

/** Gemini's reasons for a filtered answer; all of them read as OpenAI's `content_filter`. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/**
 * Gemini answers `STOP` when the model calls functions, so a candidate with functionCall parts is `tool_calls`.
 * Reasons with no OpenAI word (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, ...) pass as Gemini's own token.
 */
export function mapGeminiFinishReason(reason: unknown, hasToolCalls: boolean): FinishReason | undefined {
  const token = enumToken(reason);
  if (token === undefined) return undefined;
  if (token === 'STOP') return hasToolCalls ? 'tool_calls' : 'stop';
  if (token === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(token)) return 'content_filter';
  return token;
}
