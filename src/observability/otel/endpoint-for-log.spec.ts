import { endpointForLog } from './otel-runtime';

describe('endpointForLog', () => {
  it('keeps scheme, host and path, and drops credentials in the user part and the query', () => {
    expect(endpointForLog('https://user:s3cret@otel.example.com:4318/base?api_key=s3cret')).toBe('https://otel.example.com:4318/base');
    expect(endpointForLog('http://127.0.0.1:4318')).toBe('http://127.0.0.1:4318');
  });

  it('names no part of an endpoint it cannot parse', () => {
    expect(endpointForLog('not a url s3cret')).toBe('the configured endpoint');
  });
});
