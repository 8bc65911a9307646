import { HttpException, NotFoundException, UnauthorizedException } from '@nestjs/common';
import { CapabilityNotSupportedError, ConnectionError, InvalidRequestError, ModelNotAvailableError, ModelNotFoundError, ProviderError, RateLimitError, TimeoutError } from '../../errors';
import { InvalidKeyError, ModelNotAllowedError } from '../../../governance/governance-errors';
import { toOpenAiError } from './openai-errors';
import { OpenAiRequestError } from './openai-requests';
import { BudgetExceededError, RateLimitExceededError } from '../../../governance/budgets/budget-errors';

describe('toOpenAiError', () => {
  it('a request error keeps its param and code', () => {
    expect(toOpenAiError(new OpenAiRequestError("Invalid value for 'n'.", 'n', 'invalid_value'))).toEqual({
      status: 400,
      headers: {},
      body: { error: { message: "Invalid value for 'n'.", type: 'invalid_request_error', param: 'n', code: 'invalid_value' } },
      unexpected: false,
    });
  });

  it.each([
    [new UnauthorizedException({ message: 'A valid API token is required.', tollgate: true }), 401, 'invalid_request_error', 'invalid_api_key', null],
    [new ModelNotAvailableError('openai: model x is not available'), 404, 'invalid_request_error', 'model_not_found', 'model'],
    [new CapabilityNotSupportedError('deepseek: no embeddings'), 400, 'invalid_request_error', 'capability_not_supported', 'model'],
    [new RateLimitError('openai: rate limited', { retryAfterMs: 2500 }), 429, 'requests', 'rate_limit_exceeded', null],
    [new ProviderError('openai: upstream error', { status: 500 }), 502, 'server_error', 'provider_error', null],
    [new ProviderError('openai: upstream overloaded', { status: 503 }), 503, 'server_error', 'provider_error', null],
    [new ProviderError('anthropic: upstream overloaded', { status: 529 }), 503, 'server_error', 'provider_error', null],
    [new ConnectionError('openai: cannot connect'), 503, 'server_error', 'connection_error', null],
    [new TimeoutError('openai: timed out'), 504, 'server_error', 'timeout', null],
    [new NotFoundException(), 404, 'invalid_request_error', 'not_found', null],
    [new InvalidRequestError('anthropic: anthropic does not support seed', { param: 'seed' }), 400, 'invalid_request_error', 'invalid_request', 'seed'],
    [new ModelNotFoundError("model 'gpt-9' is not served by any configured provider"), 404, 'invalid_request_error', 'model_not_found', 'model'],
    [new BudgetExceededError({ kind: 'key', id: 'k', period: 'month', limit: { micros: 1 } }, 'micros', new Date(Date.now() + 5000)), 429, 'insufficient_quota', 'budget_exceeded', null],
    [new RateLimitExceededError({ kind: 'key', id: 'k', period: 'minute', limit: { tokens: 1 } }, 'tokens', new Date(Date.now() + 5000)), 429, 'requests', 'rate_limit_exceeded', null],
  ])('%s -> %i %s %s', (error, status, type, code, param) => {
    const mapped = toOpenAiError(error);
    expect(mapped.status).toBe(status);
    expect(mapped.body.error).toMatchObject({ type, code, param });
  });

  it('answers a refused API key as invalid_api_key and a model outside the allow-lists as a model error', () => {
    expect(toOpenAiError(new InvalidKeyError())).toMatchObject({
      status: 401,
      headers: { 'www-authenticate': 'Bearer', 'x-should-retry': 'false' },
      body: { error: { type: 'invalid_request_error', code: 'invalid_api_key', param: null } },
    });
    expect(toOpenAiError(new ModelNotAllowedError('mistral/large'))).toMatchObject({
      status: 403,
      body: { error: { message: 'The model mistral/large is not allowed for this caller.', code: 'model_not_allowed', param: 'model' } },
    });
  });

  it('keeps Retry-After and WWW-Authenticate', () => {
    expect(toOpenAiError(new RateLimitError('r', { retryAfterMs: 2500 })).headers).toEqual({ 'retry-after': '3' });
    expect(toOpenAiError(new UnauthorizedException()).headers).toEqual({ 'www-authenticate': 'Bearer', 'x-should-retry': 'false' });
  });

  it('anything unexpected is a bare 500 server_error, flagged for the log, with no detail', () => {
    const mapped = toOpenAiError(new Error('secret internals at db:5432'));
    expect(mapped).toEqual({
      status: 500,
      headers: {},
      body: { error: { message: 'Internal server error.', type: 'server_error', param: null, code: 'internal_error' } },
      unexpected: true,
    });
    expect(toOpenAiError(new HttpException('framework text', 503)).body.error.message).toBe('Internal server error.');
  });
});
