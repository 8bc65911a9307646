import type { FinishReason } from '../ai-provider.interface';

/**
 * Messages API stop_reason -> OpenAI's words. `pause_turn` (a server tool paused a long turn) has no OpenAI
 * counterpart and passes through as is, like any reason added later.
 */
export function mapAnthropicStopReason(reason: unknown, jsonOutput: boolean): FinishReason | undefined {
  if (typeof reason !== 'string') return undefined;
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      // A JSON answer arrives as the forced tool's call, but for the caller it is the answer itself.
      return jsonOutput ? 'stop' : 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return reason;
  }
}
