/** Display form of a configured URL, for logs and descriptions: no credentials, query or fragment. Throws on a URL it cannot parse. */
export function displayUrl(raw: string): string {
  const url = new URL(raw);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/$/, '');
}
