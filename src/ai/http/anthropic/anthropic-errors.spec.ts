import { UnauthorizedException } from '@nestjs/common';
import { ConnectionError, InvalidRequestError, ModelNotAvailableError, ModelNotFoundError, ProviderError } from '../../errors';
import { BudgetExceededError } from '../../../governance/budgets/budget-errors';
import { InvalidKeyError, ModelNotAllowedError } from '../../../governance/governance-errors';
import { isAnthropicPath, toAnthropicError } from './anthropic-errors';
import { AnthropicRequestError } from './anthropic-requests';

describe('toAnthropicError', () => {
  it.each([
    ['a request error', new AnthropicRequestError('top_k: not supported'), 400, 'invalid_request_error'],
    ['a bad key', new InvalidKeyError(), 401, 'authentication_error'],
    ['a missing credential', new UnauthorizedException(), 401, 'authentication_error'],
    ['a model outside the allow-list', new ModelNotAllowedError('openai/gpt-test'), 403, 'permission_error'],
    ['an unknown model', new ModelNotFoundError('model x does not exist'), 404, 'not_found_error'],
    ['a model that cannot serve the request (422 on /v1)', new ModelNotAvailableError('no vision'), 404, 'not_found_error'],
    ['an unreachable upstream (503 on /v1)', new ConnectionError('down'), 529, 'overloaded_error'],
    ['an upstream failure', new ProviderError('failed', { provider: 'openai', status: 500 }), 502, 'api_error'],
    ["Anthropic's 529 overloaded_error", new ProviderError('overloaded', { provider: 'anthropic', status: 529 }), 529, 'overloaded_error'],
    ["Gemini's 503 UNAVAILABLE, or OpenAI's 503", new ProviderError('overloaded', { provider: 'gemini', status: 503 }), 529, 'overloaded_error'],
    ['a bug', new Error('boom'), 500, 'api_error'],
  ])('%s is %d %s, in the error envelope', (_, exception, status, type) => {
    const mapped = toAnthropicError(exception);
    expect(mapped.status).toBe(status);
    expect(mapped.body).toEqual({ type: 'error', error: { type, message: expect.any(String) } });
  });

  it('a spent budget is 429 rate_limit_error that tells the SDK not to retry', () => {
    const mapped = toAnthropicError(new BudgetExceededError({ kind: 'key', id: 'k1', period: 'day', limit: { tokens: 10 } }, 'tokens', new Date(0)));
    expect(mapped).toMatchObject({ status: 429, body: { error: { type: 'rate_limit_error' } } });
    expect(mapped.headers['x-should-retry']).toBe('false');
  });

  it("a provider's refusal names the field as this surface's caller sent it", () => {
    const refusal = new InvalidRequestError('gemini: parallel_tool_calls false is not supported by gemini', { provider: 'gemini', param: 'parallel_tool_calls' });
    expect(toAnthropicError(refusal).body.error).toEqual({
      type: 'invalid_request_error',
      message: 'tool_choice.disable_parallel_tool_use: gemini: parallel_tool_calls false is not supported by gemini',
    });
  });

  it('never shows the text of an unexpected error', () => {
    expect(toAnthropicError(new Error('secret detail')).body.error.message).not.toContain('secret');
  });
});

describe('isAnthropicPath', () => {
  it.each([
    ['/anthropic/v1/messages?beta=true', true],
    ['/gw/anthropic/v1/models', true],
    ['/anthropic/v1', true],
    ['/openai/v1/chat/completions', false],
    ['/v1/generate?x=/anthropic/v1/', false],
  ])('%s -> %s', (url, expected) => expect(isAnthropicPath(url)).toBe(expected));
});
