import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let root: string | undefined;

/** The installed package's root (the folder of Tollgate's package.json), from src/ or dist/src/ alike. */
export function packageRoot(): string {
  if (root) return root;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'tollgate') {
      root = dir;
      return dir;
    }
    if (dirname(dir) === dir) throw new Error('cannot find the tollgate package root');
  }
}

/** A file shipped with the package (see package.json "files"), e.g. config/tollgate.example.yaml. */
export function readPackagedFile(relativePath: string): string {
  return readFileSync(join(packageRoot(), relativePath), 'utf8');
}

export function packageVersion(): string {
  return (JSON.parse(readPackagedFile('package.json')) as { version: string }).version;
}
