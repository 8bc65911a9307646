/**
 * Every relative link and `#anchor` in README.md, docs/*.md and bench/*.md resolves: the file (or folder)
 * exists, and an anchor names a heading of the target as GitHub renders it. Links inside code (fenced blocks
 * and inline spans) are examples, not links, and are skipped; absolute URLs are not fetched.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { markdownParts, type ProseLine } from './support/markdown';

const ROOT = resolve(__dirname, '..');

/** The documents whose links are checked, as paths relative to the repository root. */
function documents(): string[] {
  const inFolder = (folder: string) =>
    readdirSync(join(ROOT, folder))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `${folder}/${name}`);
  return ['README.md', ...inFolder('docs'), ...inFolder('bench')];
}

/** Markdown lines outside fenced code blocks, with inline code spans blanked. */
function proseLines(markdown: string): ProseLine[] {
  return markdownParts(markdown).prose.map(({ line, text }) => ({ line, text: text.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => ' '.repeat(span.length)) }));
}

/** GitHub's heading anchor: lower case, punctuation and symbols dropped (but `-` and `_`), spaces as `-`. */
export function githubSlug(headingText: string): string {
  const rendered = headingText
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a document's ATX headings, with GitHub's `-1`, `-2` suffixes for repeated ones. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of markdownParts(markdown).prose) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  line: number;
  target: string;
}

/** Inline links and images `[text](target)` / `![alt](target "title")` outside code. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(markdown)) {
    for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line, target: match[1] });
    }
  }
  return links;
}

/**
 * Problems with the relative links of the document at `path` (relative to `root`), one line each:
 * `path:line: target: what is wrong`.
 */
export function brokenLinks(root: string, path: string): string[] {
  const readDocument = (file: string) => readFileSync(file, 'utf8');
  const problems: string[] = [];
  const source = join(root, path);
  for (const { line, target } of linksOf(readDocument(source))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const hashAt = target.indexOf('#');
    const filePart = hashAt < 0 ? target : target.slice(0, hashAt);
    const anchor = hashAt < 0 ? undefined : decodeURIComponent(target.slice(hashAt + 1));
    const file = filePart === '' ? source : resolve(dirname(source), decodeURIComponent(filePart));
    const where = `${path}:${line}: ${target}`;
    if (relative(root, file).startsWith('..')) {
      problems.push(`${where}: points outside the repository`);
      continue;
    }
    if (!existsSync(file)) {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!file.endsWith('.md') || statSync(file).isDirectory()) {
      problems.push(`${where}: an anchor into a file that is not markdown`);
      continue;
    }
    if (!headingAnchors(readDocument(file)).has(anchor)) problems.push(`${where}: no heading with that anchor`);
  }
  return problems;
}

describe('documentation links', () => {
  it('checks README.md, every docs/*.md and every bench/*.md', () => {
    const checked = documents();
    expect(checked).toEqual(expect.arrayContaining(['README.md', 'docs/decisions.md', 'bench/README.md', 'bench/RESULTS.md']));
  });

  it.each(documents())('%s: every relative link and anchor resolves', (path) => {
    expect(brokenLinks(ROOT, path)).toEqual([]);
  });

  it('names no file outside the repository as part of the project', () => {
    const outside = documents().filter((path) => /\.\.\/shared|DECISIONS\.md|WIRE-NOTES\.md/.test(readFileSync(join(ROOT, path), 'utf8')));
    expect(outside).toEqual([]);
  });
});

describe('the link checker', () => {
  const fixture: Record<string, string> = {
    'docs/a.md': [
      '# Part A — AuthModule',
      '## A4. `skip_paths` matching',
      '## Notes',
      '## Notes',
      'Good: [self](#part-a--authmodule), [code](#a4-skip_paths-matching), [second](#notes-1), [b](b.md#b-title), [dir](../docs).',
      'Bad: [missing file](nope.md), [missing anchor](b.md#nothing), [outside](../../elsewhere.md), [own](#none).',
      '`[in code](ignored.md)`',
      '```',
      '[in a fence](ignored.md)',
      '```',
      '[web](https://example.com/x.md)',
    ].join('\n'),
    'docs/b.md': '# B: Title!\n',
  };
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'tollgate-docs-links-'));
    for (const [path, text] of Object.entries(fixture)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reports a missing file, a missing anchor and a path leaving the repository, and nothing else', () => {
    expect(brokenLinks(root, 'docs/a.md')).toEqual([
      'docs/a.md:6: nope.md: no such file',
      'docs/a.md:6: b.md#nothing: no heading with that anchor',
      'docs/a.md:6: ../../elsewhere.md: points outside the repository',
      'docs/a.md:6: #none: no heading with that anchor',
    ]);
  });

  it('derives anchors as GitHub does', () => {
    expect(githubSlug('Part A — AuthModule')).toBe('part-a--authmodule');
    expect(githubSlug('A4. `skip_paths` matching')).toBe('a4-skip_paths-matching');
    expect(githubSlug('Against a peer gateway: `npm run bench:compare`')).toBe('against-a-peer-gateway-npm-run-benchcompare');
    expect(githubSlug('B: Title!')).toBe('b-title');
    expect([...headingAnchors(fixture['docs/a.md'])]).toEqual(['part-a--authmodule', 'a4-skip_paths-matching', 'notes', 'notes-1']);
  });
});
