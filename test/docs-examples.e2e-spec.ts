/**
 * Every gateway example in README.md and docs/*.md runs as written against `npm run demo`: the shell blocks'
 * curl commands (with the block's variable assignments) and the `openai` client snippets. Examples that need
 * a JWT-configured server ($TOKEN, /auth/context) are left to the auth suites, which run the same flows.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './support/cli-run';
import { markdownParts } from './support/markdown';
import { type DemoProcess, startDemo } from './support/demo-process';

const DEMO_TOKEN = 'demo-token';
const SERVER = /\b(?:localhost|127\.0\.0\.1):3000\b/;
const EVERY_SERVER = new RegExp(SERVER.source, 'g');

interface Example {
  where: string;
  language: string;
  code: string;
}

function fencedBlocks(file: string): Example[] {
  return markdownParts(readFileSync(join(ROOT, file), 'utf8')).blocks.map(({ line, language, code }) => ({ where: `${file}:${line}`, language, code }));
}

const documents = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const blocks = documents.flatMap(fencedBlocks).filter((block) => SERVER.test(block.code) && !/\$TOKEN\b|\/auth\/context/.test(block.code));

/** A shell block's commands: continuation lines joined, comments after a command dropped. */
function shellCommands(code: string): string[] {
  return code
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * Variable assignments the curl lines rely on (`H=...`), as a reader's shell keeps them from one block of a page
 * to the next; not the reader's own API_TOKEN (the demo's is set) nor values made by a command.
 */
const isAssignment = (line: string) => /^(export\s+)?[A-Z_]+=/.test(line) && !line.includes('$(') && !/^(export\s+)?API_TOKEN=/.test(line);

const curlExamples = documents.flatMap((file) => {
  const assignments: string[] = [];
  return fencedBlocks(file)
    .filter((block) => block.language === 'sh' || block.language === 'bash')
    .flatMap((block) => {
      const commands = shellCommands(block.code);
      assignments.push(...commands.filter(isAssignment));
      if (!blocks.some((runnable) => runnable.where === block.where)) return [];
      const known = [...assignments];
      return commands.filter((line) => line.startsWith('curl ')).map((curl) => ({ where: block.where, assignments: known, curl }));
    });
});
const clientExamples = blocks.filter((block) => /^(js|ts|mjs)$/.test(block.language) && block.code.includes("from 'openai'"));

let demo: DemoProcess;
beforeAll(async () => {
  demo = await startDemo();
}, 120_000);
afterAll(() => demo.stop());

describe('documentation examples against npm run demo', () => {
  it('finds the examples (so a change in the docs cannot silently leave nothing to run)', () => {
    expect(curlExamples.length).toBeGreaterThanOrEqual(8);
    expect(clientExamples.length).toBeGreaterThanOrEqual(2);
  });

  it.each(curlExamples.map((example) => [example.where, example.curl, example]))('%s: %s answers 200', (_where, _curl, example) => {
    const { assignments, curl } = example as (typeof curlExamples)[number];
    const script = [...assignments, `${curl} --write-out '\\n%{http_code}'`].join('\n').replace(EVERY_SERVER, demo.origin.slice('http://'.length));
    const run = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH, API_TOKEN: DEMO_TOKEN } });
    const lines = run.stdout.trimEnd().split('\n');
    const status = lines.pop();
    expect({ exit: run.status, status }).toEqual({ exit: 0, status: '200' });
    // An error body, not a Responses object's `"error":null`.
    expect(lines.join('\n')).not.toMatch(/"error":\s*[{"]/);
  });

  it.each(clientExamples.map((example) => [example.where, example]))('%s: the openai client snippet runs', (_where, example) => {
    const { code } = example as Example;
    const file = join(ROOT, `.docs-example-${process.pid}.mjs`);
    writeFileSync(file, code.replace(EVERY_SERVER, demo.origin.slice('http://'.length)));
    try {
      const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH, API_TOKEN: DEMO_TOKEN } });
      expect({ exit: run.status, stderr: run.stderr }).toEqual({ exit: 0, stderr: '' });
      if (code.includes('console.log')) expect(run.stdout).toMatch(/\[demo\]/);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
