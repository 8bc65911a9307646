import { AuthenticationError, ConnectionError, InvalidRequestError, RateLimitError, TimeoutError } from '../errors';

/** What the model learns about a failed tool call: a category, never the error's text (docs/decisions.md B7). */
export type ToolFailureCategory =
  | 'invalid_arguments'
  | 'forbidden'
  | 'rate_limited'
  | 'timeout'
  | 'tool_unavailable'
  | 'tool_error';

/** Thrown by the toolset when ajv refuses the arguments. */
export class ToolArgumentsError extends InvalidRequestError {
  override readonly type: string = 'invalid_tool_arguments';
}

export function toolFailureCategory(error: unknown): ToolFailureCategory {
  if (error instanceof ToolArgumentsError || error instanceof InvalidRequestError) return 'invalid_arguments';
  if (error instanceof RateLimitError) return 'rate_limited';
  if (error instanceof TimeoutError) return 'timeout';
  if (error instanceof ConnectionError || error instanceof AuthenticationError) return 'tool_unavailable';
  return 'tool_error';
}
