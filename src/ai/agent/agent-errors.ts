import { InvalidResponseError } from '../errors';

/** Why a model turn broke the action protocol (docs/decisions.md B7). */
export type AgentProtocolViolation =
  | 'invalid_json'
  | 'multiple_actions'
  | 'unknown_keys'
  | 'invalid_action'
  | 'unknown_tool'
  | 'action_too_large'
  | 'response_too_large';

/**
 * The model's turn is not a valid answer nor exactly one allowlisted action. The run stops: Tollgate never
 * guesses what was meant. Over HTTP it is a 502, like any other unusable provider answer.
 */
export class AgentProtocolError extends InvalidResponseError {
  override readonly type: string = 'agent_protocol_error';

  constructor(
    readonly violation: AgentProtocolViolation,
    message: string,
    options?: { provider?: string },
  ) {
    super(message, options);
  }
}
