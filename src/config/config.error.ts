/**
 * Invalid configuration. Each problem is one line `<source>: <key.path>: <message>`, where source is
 * the file, an environment variable or a flag. Messages name keys and variables, never values.
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

/** `['auth', 'skip_paths', '0']` -> `auth.skip_paths[0]`. */
export function formatKeyPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number' || /^\d+$/.test(part)) out += `[${part}]`;
    else out += out ? `.${part}` : part;
  }
  return out || '(top level)';
}
