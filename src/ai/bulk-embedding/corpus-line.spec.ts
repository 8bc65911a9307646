import { MAX_CORPUS_ID_CHARS, parseCorpusLine } from './corpus-line';

describe('parseCorpusLine', () => {
  it('accepts id and text, with optional metadata', () => {
    expect(parseCorpusLine('{"id":"a","text":"hello"}')).toEqual({ record: { id: 'a', text: 'hello' } });
    expect(parseCorpusLine('{"id":"a","text":"hello","metadata":{"k":1}}')).toEqual({ record: { id: 'a', text: 'hello', metadata: { k: 1 } } });
  });

  it.each([
    ['{"id":', 'not valid JSON'],
    ['"text"', 'must be a JSON object'],
    ['null', 'must be a JSON object'],
    ['[{"id":"a"}]', 'must be a JSON object'],
    ['{"id":"a","text":"t","vector":[1]}', 'unknown field "vector" (allowed: id, text, metadata)'],
    ['{"id":7,"text":"t"}', `id must be a non-empty string of at most ${MAX_CORPUS_ID_CHARS} characters`],
    ['{"id":" ","text":"t"}', `id must be a non-empty string of at most ${MAX_CORPUS_ID_CHARS} characters`],
    [JSON.stringify({ id: 'x'.repeat(MAX_CORPUS_ID_CHARS + 1), text: 't' }), `id must be a non-empty string of at most ${MAX_CORPUS_ID_CHARS} characters`],
    ['{"id":"a"}', 'text must be a non-empty string'],
    ['{"id":"a","text":"  "}', 'text must be a non-empty string'],
    ['{"id":"a","text":"t","metadata":[1]}', 'metadata must be a JSON object'],
    ['{"id":"a","text":"t","metadata":null}', 'metadata must be a JSON object'],
  ])('%s -> %s', (line, problem) => {
    expect(parseCorpusLine(line)).toEqual({ problem });
  });

  it('never echoes the line in a problem', () => {
    const secret = 'sk-secret-in-corpus';
    const parsed = parseCorpusLine(`{"id":"${secret}","text":1}`);
    expect(JSON.stringify(parsed)).not.toContain(secret);
  });
});
