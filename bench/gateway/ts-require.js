'use strict';
// Lets the benchmark load the test emulators (TypeScript) without a build step: each .ts file under the
// repository is transpiled to CommonJS on require, types stripped, nothing checked.
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.resolve(__dirname, '..', '..');

require.extensions['.ts'] = (module, filename) => {
  if (!filename.startsWith(root)) throw new Error(`refusing to transpile ${filename}`);
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    fileName: filename,
  });
  module._compile(outputText, filename);
};
