#!/usr/bin/env node
'use strict';
// `npm start` on a fresh clone: build when dist/ is missing or older than any source or build setting.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const output = join(root, 'dist', 'src', 'main.js');

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

const inputs = ['src', 'config', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((name) => join(root, name));
const stale =
  !existsSync(output) ||
  newestMtime(join(root, 'dist')) < Math.max(...inputs.filter((path) => existsSync(path)).map(newestMtime));

if (stale) {
  process.stderr.write('tollgate: building (dist/ is missing or older than src/)\n');
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
