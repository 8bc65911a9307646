import { InvalidRequestError } from '../errors';

/** The request names a tool that is not registered, or none is registered at all (400, docs/decisions.md B3). */
export class ToolNotConfiguredError extends InvalidRequestError {
  override readonly type: string = 'tool_not_configured';
}
