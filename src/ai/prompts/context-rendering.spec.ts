import { isSensitiveKey, redactSensitive, renderContextItems } from './context-rendering';

describe('renderContextItems', () => {
  const options = { excludedFields: ['id', 'score'], sensitiveKeys: ['session'] };

  it('numbers items, renders objects as key lines and strings as they are', () => {
    const text = renderContextItems([{ title: 'Doc', body: ' text ', tags: ['a', 'b'] }, '  a note  '], options);
    expect(text).toBe('[1] title: Doc\nbody: text\ntags: ["a","b"]\n\n[2] a note');
  });

  it('drops excluded fields, sensitive keys at any depth, empty values and empty items', () => {
    const text = renderContextItems(
      [
        { id: 1, score: 0.9, title: 'T', apiKey: 'sk-1', user_session: 's', meta: { password: 'p', lang: 'en' }, note: null },
        { id: 2 },
        '',
      ],
      options,
    );
    expect(text).toBe('[1] title: T\nmeta: {"lang":"en"}');
  });
});

describe('sensitive keys', () => {
  it('matches any spelling and any key ending in a sensitive name', () => {
    for (const key of ['api_key', 'apiKey', 'API-KEY', 'openai_api_key', 'authToken', 'client_secret']) {
      expect(isSensitiveKey(key, ['api_key', 'token', 'secret'])).toBe(true);
    }
    for (const key of ['tokens_used', 'model', 'secretary_name']) {
      expect(isSensitiveKey(key, ['api_key', 'token', 'secret'])).toBe(false);
    }
  });

  it('redacts copies, never the original', () => {
    const original = { a: { token: 't', keep: [{ secret: 's', ok: 1 }] } };
    expect(redactSensitive(original, ['token', 'secret'])).toEqual({ a: { keep: [{ ok: 1 }] } });
    expect(original.a.token).toBe('t');
  });
});
