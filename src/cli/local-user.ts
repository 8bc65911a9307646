import { userInfo } from 'node:os';

/** The principal of a CLI run (agent, MCP over stdio): the local account that started it. */
export function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'cli';
  }
}
