import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMessages, DEFAULT_PROMPT_TEMPLATES, fillTemplate, loadPromptTemplatesFile, templatesFor } from './prompt-templates';

describe('prompt templates', () => {
  it('fills both placeholders in one pass', () => {
    expect(fillTemplate('{context} / {prompt} / {other}', { prompt: 'p {context}', context: 'c {prompt}' })).toBe(
      'c {prompt} / p {context} / {other}',
    );
  });

  it('chooses the with-context template only when there is context, and omits an empty system prompt', () => {
    const templates = { systemPrompt: '', withContext: 'C={context} Q={prompt}', withoutContext: 'Q={prompt}' };
    expect(buildMessages(templates, 'why', '')).toEqual([{ role: 'user', content: 'Q=why' }]);
    expect(buildMessages(templates, 'why', '[1] x')).toEqual([{ role: 'user', content: 'C=[1] x Q=why' }]);
  });

  it('lets a provider override single templates', () => {
    const set = { ...DEFAULT_PROMPT_TEMPLATES, providers: { local: { systemPrompt: 'Local.' } } };
    expect(templatesFor(set, 'local')).toEqual({ ...DEFAULT_PROMPT_TEMPLATES, systemPrompt: 'Local.' });
    expect(templatesFor(set, 'other')).toEqual({ ...DEFAULT_PROMPT_TEMPLATES });
  });
});

describe('loadPromptTemplatesFile', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-prompts-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads multiline YAML templates and per-provider sections', () => {
    const path = file('ok.yaml', 'system_prompt: |\n  Line one.\n  Line two.\nproviders:\n  ollama:\n    without_context: "Q: {prompt}"\n');
    expect(loadPromptTemplatesFile(path)).toEqual({
      shared: { systemPrompt: 'Line one.\nLine two.\n' },
      providers: { ollama: { withoutContext: 'Q: {prompt}' } },
    });
  });

  it('names the file and the key on errors', () => {
    expect(() => loadPromptTemplatesFile(file('typo.yaml', 'sytem_prompt: x\n'), 'typo.yaml')).toThrow(
      'typo.yaml: sytem_prompt: unknown key (known keys: system_prompt, with_context, without_context)',
    );
    expect(() => loadPromptTemplatesFile(file('num.yaml', 'providers:\n  a:\n    with_context: 3\n'), 'num.yaml')).toThrow(
      'num.yaml: providers.a.with_context: must be a string',
    );
    expect(() => loadPromptTemplatesFile(join(dir, 'missing.yaml'), 'missing.yaml')).toThrow('missing.yaml: cannot read the file (ENOENT)');
    expect(() => loadPromptTemplatesFile(file('list.yaml', '- a\n'), 'list.yaml')).toThrow('list.yaml: must be a mapping');
  });
});
