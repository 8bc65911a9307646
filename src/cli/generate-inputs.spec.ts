import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from './cli.errors';
import { imageFlag, responseFormatFlag } from './generate-inputs';

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
