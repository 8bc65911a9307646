/**
 * `GET /responses/{id}/input_items` as OpenAI pages it: a list object of the request's input items, newest
 * first unless `order=asc`, at most `limit` (1 to 100, default 20), after the item `after` names.
 */
import { OpenAiRequestError } from '../openai/openai-requests';
import type { ResponseItem } from './responses-input';

export function inputItemsPage(items: readonly ResponseItem[], query: Record<string, unknown>) {
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new OpenAiRequestError("Invalid value for 'order': expected one of asc, desc.", 'order', 'invalid_value');
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new OpenAiRequestError("Invalid value for 'limit': must be an integer from 1 to 100.", 'limit', 'invalid_value');
  const ordered = order === 'asc' ? [...items] : [...items].reverse();
  let start = 0;
  if (typeof query.after === 'string') {
    start = ordered.findIndex((item) => item.id === query.after) + 1;
    if (start === 0) throw new OpenAiRequestError(`Invalid value for 'after': no input item '${query.after}' in this response.`, 'after', 'invalid_value');
  }
  const data = ordered.slice(start, start + limit);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: start + limit < ordered.length,
  };
}
