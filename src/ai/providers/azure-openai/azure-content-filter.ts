/**
 * Azure OpenAI's content filter, read from its error answer: a filtered prompt is a 400 with
 * `{"error":{"code":"content_filter","param":"prompt","innererror":{"code":"ResponsibleAIPolicyViolation",
 * "content_filter_result":{"hate":{"filtered":true,"severity":"high"},"jailbreak":{"filtered":true,"detected":true},...}}}}`.
 * Only category names and severities (plain tokens) are read; the message text stays upstream.
 */
import { isObject } from '../../../common/json-values';
import { ContentFilterError, type TollgateError } from '../../errors';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';

const TOKEN = /^[a-z][a-z0-9_]{0,39}$/;

/** `hate: high`, `jailbreak`: each category whose result says `filtered: true`, in the order Azure sent them. */
export function filteredCategories(results: unknown): string[] {
  if (!isObject(results)) return [];
  const fired: string[] = [];
  for (const [category, result] of Object.entries(results)) {
    if (!TOKEN.test(category) || !isObject(result)) continue;
    // Custom blocklists report a list of {id, filtered}; one filtered entry is enough to name the category.
    if (category === 'custom_blocklists' && Array.isArray(result.details)) {
      if (result.details.some((entry) => isObject(entry) && entry.filtered === true)) fired.push(category);
      continue;
    }
    if (result.filtered !== true) continue;
    const severity = typeof result.severity === 'string' && TOKEN.test(result.severity) ? result.severity : undefined;
    fired.push(severity ? `${category}: ${severity}` : category);
  }
  return fired;
}

/** A 400 whose code is `content_filter` (or whose inner code is ResponsibleAIPolicyViolation) -> ContentFilterError. */
export function contentFilterError(response: UpstreamErrorResponse): TollgateError | undefined {
  if (response.status !== 400) return undefined;
  const body = response.body;
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  if (!error) return undefined;
  const inner = isObject(error.innererror) ? error.innererror : undefined;
  if (error.code !== 'content_filter' && inner?.code !== 'ResponsibleAIPolicyViolation') return undefined;
  // Documented as content_filter_result; some API versions spell it content_filter_results.
  const fired = filteredCategories(inner?.content_filter_result ?? inner?.content_filter_results);
  const which = fired.length > 0 ? ` (${fired.join(', ')})` : '';
  return new ContentFilterError(`${response.provider}: Azure's content filter refused the prompt${which}`, {
    provider: response.provider,
    param: 'messages',
  });
}
