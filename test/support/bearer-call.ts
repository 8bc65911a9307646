/** One HTTP call of a suite against a server process, with a bearer credential and an optional JSON body. */
export interface Answer {
  status: number;
  /** The parsed body when the answer is JSON, else `{}` (`/metrics` answers text). */
  body: Record<string, any>;
  text: string;
  headers: Headers;
}

export async function bearerCall(server: string, method: string, path: string, bearer: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${server}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') && text !== '';
  return { status: response.status, body: json ? JSON.parse(text) : {}, text, headers: response.headers };
}
