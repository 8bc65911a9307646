import { ContentFilterError } from '../../errors';
import { contentFilterError, filteredCategories } from './azure-content-filter';

describe("Azure's content filter answers", () => {
  it('names each category that fired, with its severity when it has one, in the order Azure sent them', () => {
    expect(
      filteredCategories({
        hate: { filtered: false, severity: 'safe' },
        sexual: { filtered: true, severity: 'medium' },
        jailbreak: { filtered: true, detected: true },
        custom_blocklists: { filtered: true, details: [{ id: 'b1', filtered: false }, { id: 'b2', filtered: true }] },
        profanity: { filtered: true, detected: true },
      }),
    ).toEqual(['sexual: medium', 'jailbreak', 'custom_blocklists', 'profanity']);
  });

  it('reads only plain tokens: a category or severity carrying other text is left out or bare', () => {
    expect(filteredCategories({ 'hate <script>': { filtered: true }, violence: { filtered: true, severity: 'high; drop' } })).toEqual(['violence']);
    expect(filteredCategories('not an object')).toEqual([]);
  });

  it('maps a 400 content_filter (or ResponsibleAIPolicyViolation) and nothing else', () => {
    const response = (status: number, error: unknown) => ({ provider: 'azure', status, headers: {}, body: { error } });
    const refused = contentFilterError(response(400, { code: 'content_filter', innererror: { content_filter_results: { violence: { filtered: true, severity: 'high' } } } }));
    expect(refused).toBeInstanceOf(ContentFilterError);
    expect(refused?.message).toBe("azure: Azure's content filter refused the prompt (violence: high)");
    expect(contentFilterError(response(400, { code: null, innererror: { code: 'ResponsibleAIPolicyViolation' } }))?.message).toBe(
      "azure: Azure's content filter refused the prompt",
    );
    expect(contentFilterError(response(400, { code: 'invalid_request_error' }))).toBeUndefined();
    expect(contentFilterError(response(500, { code: 'content_filter' }))).toBeUndefined();
  });
});
