import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from './cli.errors';
import { imageFlag, responseFormatFlag, toolChoiceFlag, toolsFlag } from './generate-inputs';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-generate-inputs-'));
  writeFileSync(join(dir, 'city answer.json'), '{"type":"object","properties":{"city":{"type":"string"}}}');
  writeFileSync(join(dir, 'list.json'), '[1]');
  writeFileSync(join(dir, 'broken.json'), '{');
  writeFileSync(join(dir, 'dot.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('responseFormatFlag', () => {
  it('takes text and json_object as they are', () => {
    expect(responseFormatFlag('text')).toEqual({ type: 'text' });
    expect(responseFormatFlag('json_object')).toEqual({ type: 'json_object' });
  });

  it('reads a JSON Schema file into json_schema named after the file', () => {
    expect(responseFormatFlag(join(dir, 'city answer.json'))).toEqual({
      type: 'json_schema',
      name: 'city_answer',
      schema: { type: 'object', properties: { city: { type: 'string' } } },
    });
  });

  it.each([
    ['missing.json', 'no such file'],
    ['broken.json', 'not valid JSON'],
    ['list.json', 'must be an object'],
  ])('refuses %s naming the flag (%s)', (file, why) => {
    const call = () => responseFormatFlag(join(dir, file));
    expect(call).toThrow(UsageError);
    expect(call).toThrow(/--response-format/);
    expect(call).toThrow(why);
  });
});

describe('imageFlag', () => {
  it('passes http(s) URLs on and inlines local files as base64 with their media type', () => {
    expect(imageFlag('https://example.com/cat.jpg')).toEqual({ type: 'image', image: { kind: 'url', url: 'https://example.com/cat.jpg' } });
    expect(imageFlag(join(dir, 'dot.png'))).toEqual({ type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw==' } });
  });

  it.each([
    ['notes.txt', 'must be an http(s) URL or a .png'],
    ['ftp://example.com/a.png', 'must be an http(s) URL or a .png'],
    ['absent.png', 'no such file'],
  ])('refuses %s naming the flag', (value, says) => {
    const call = () => imageFlag(value.includes('://') ? value : join(dir, value));
    expect(call).toThrow(UsageError);
    expect(call).toThrow(/--image/);
    expect(call).toThrow(says);
  });
});

describe('toolsFlag and toolChoiceFlag', () => {
  const file = (name: string, content: string) => {
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  };

  it('reads tools in the short shape and in OpenAI\'s, keeping only what the domain knows', () => {
    const path = file('tools.json', JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: true } }, { name: 'get_time', description: 'Now' }]));
    expect(toolsFlag(path)).toEqual([
      { name: 'get_weather', parameters: { type: 'object' }, strict: true },
      { name: 'get_time', description: 'Now' },
    ]);
  });

  it.each([
    ['empty.json', '[]', 'must hold a non-empty array of tools'],
    ['object.json', '{"name":"x"}', 'must hold a non-empty array of tools'],
    ['badname.json', '[{"name":"has space"}]', '[0].name must be 1-64 letters'],
    ['params.json', '[{"name":"x","parameters":"object"}]', '[0].parameters must be a JSON Schema object'],
    ['strict.json', '[{"name":"x","strict":"yes"}]', '[0].strict must be true or false'],
    ['broken.json', '[{', 'not valid JSON'],
  ])('refuses %s naming the flag and the entry', (name, content, says) => {
    const call = () => toolsFlag(file(name, content));
    expect(call).toThrow(UsageError);
    expect(call).toThrow(/^--tools /);
    expect(call).toThrow(says);
  });

  it('takes auto, none, required or one tool name', () => {
    expect(['auto', 'none', 'required'].map(toolChoiceFlag)).toEqual(['auto', 'none', 'required']);
    expect(toolChoiceFlag('get_weather')).toEqual({ name: 'get_weather' });
    expect(() => toolChoiceFlag('two words')).toThrow(/^--tool-choice must be auto, none, required or a tool name/);
  });
});
