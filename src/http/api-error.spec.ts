import { BadRequestException, HttpException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import {
  AuthenticationError,
  CapabilityNotSupportedError,
  ConnectionError,
  InvalidRequestError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  NoHealthyDeploymentError,
  RateLimitError,
  TimeoutError,
  TollgateError,
  UnknownProviderError,
} from '../common/errors';
import { AdminRequiredError, InvalidKeyError, KeyNotFoundError, ModelNotAllowedError } from '../governance/governance-errors';
import { BudgetExceededError, BudgetStoreUnavailableError, InvalidBudgetError, RateLimitExceededError } from '../governance/budgets/budget-errors';
import { apiRequestError, errorEnvelope, toApiError } from './api-error';

describe('toApiError', () => {
  it.each([
    [new InvalidRequestError('prompt must be a string'), 400, 'invalid_request'],
    [new UnknownProviderError('unknown provider: nope'), 400, 'unknown_provider'],
    [new CapabilityNotSupportedError('deepseek does not embed'), 400, 'capability_not_supported'],
    [new RateLimitError('openai: rate limited'), 429, 'rate_limited'],
    [new ModelNotAvailableError('openai: model not available'), 422, 'model_not_available'],
    [new AuthenticationError('openai: credentials rejected'), 502, 'provider_authentication'],
    [new ProviderError('openai: upstream returned 503', { status: 503 }), 502, 'provider_error'],
    [new InvalidResponseError('openai: malformed response'), 502, 'invalid_provider_response'],
    [new ConnectionError('openai: connection refused'), 503, 'connection_error'],
    [new TimeoutError('openai: timed out'), 504, 'timeout'],
    [new InvalidKeyError(), 401, 'invalid_key'],
    [new ModelNotAllowedError('mistral/large'), 403, 'model_not_allowed'],
    [new AdminRequiredError(), 403, 'forbidden'],
    [new KeyNotFoundError('ab12cd34ef56'), 404, 'key_not_found'],
  ])('maps %p to %i %s with its own message', (error, status, type) => {
    const mapped = toApiError(error);
    expect(mapped).toMatchObject({ status, type, message: error.message, unexpected: false });
  });

  it('asks for a bearer token when an API key is refused, and tells clients not to retry it', () => {
    expect(toApiError(new InvalidKeyError()).headers).toEqual({ 'www-authenticate': 'Bearer', 'x-should-retry': 'false' });
  });

  it('sends Retry-After in whole seconds when the upstream said when to retry', () => {
    expect(toApiError(new RateLimitError('limited', { retryAfterMs: 1500 })).headers).toEqual({ 'retry-after': '2' });
    expect(toApiError(new RateLimitError('limited')).headers).toEqual({});
  });

  it('hides the message of a plain TollgateError and of unknown errors', () => {
    for (const error of [new TollgateError('secret detail'), new Error('db password=x'), 'thrown string']) {
      expect(toApiError(error)).toEqual({
        status: 500,
        type: 'internal_error',
        message: 'Internal server error.',
        headers: {},
        unexpected: true,
      });
    }
  });

  it('never echoes framework text, only messages Tollgate wrote', () => {
    const framework = toApiError(new BadRequestException('Body cannot be empty when content-type is set'));
    expect(framework).toMatchObject({ status: 400, type: 'invalid_request', message: 'The request is invalid.' });
    const own = toApiError(apiRequestError(400, 'prompt must be a string'));
    expect(own).toMatchObject({ status: 400, type: 'invalid_request', message: 'prompt must be a string' });
  });

  it('recognises a JSON parse failure without repeating the parser message', () => {
    const mapped = toApiError(new HttpException("Unexpected token 'b', \"{bad\" is not valid JSON", 400));
    expect(mapped).toMatchObject({ status: 400, type: 'invalid_json', message: 'The request body is not valid JSON.' });
  });

  it('maps framework statuses to envelope types', () => {
    expect(toApiError(new NotFoundException())).toMatchObject({ status: 404, type: 'not_found' });
    expect(toApiError(new PayloadTooLargeException())).toMatchObject({ status: 413, type: 'payload_too_large' });
    expect(toApiError(new HttpException('x', 401))).toMatchObject({
      status: 401,
      type: 'authentication_required',
      headers: { 'www-authenticate': 'Bearer', 'x-should-retry': 'false' },
    });
    expect(toApiError(new HttpException('x', 503))).toMatchObject({ status: 500, type: 'internal_error' });
  });

  it('builds the envelope with a non-empty type and the request id', () => {
    expect(errorEnvelope(toApiError(new NotFoundException()), 'req-1')).toEqual({
      error: { type: 'not_found', message: 'No route matches this path.' },
      request_id: 'req-1',
    });
  });

  describe('governance errors', () => {
    const inAMinute = () => new Date(Date.now() + 59_500);
    const budget = { kind: 'tenant', id: 't-1', period: 'day', limit: { micros: 5_000_000 } } as const;

    it('maps a spent budget to 429 budget_exceeded with the reset time, final until then (x-should-retry: false, no Retry-After)', () => {
      const resetAt = inAMinute();
      const mapped = toApiError(new BudgetExceededError(budget, 'micros', resetAt));
      expect(mapped).toMatchObject({ status: 429, type: 'budget_exceeded', unexpected: false });
      expect(mapped.message).toBe(`This call would exceed the daily budget of tenant t-1 ($5.00); it resets at ${resetAt.toISOString()}.`);
      expect(mapped.headers).toEqual({ 'x-should-retry': 'false', 'retry-after-ms': '0', 'x-budget-reset': resetAt.toISOString() });
    });

    it('maps RPM/TPM to 429 rate_limited with Retry-After, the store outage to 503 and bad rules to 400', () => {
      const rate = new RateLimitExceededError({ kind: 'key', id: 'k-1', period: 'minute', limit: { requests: 60 } }, 'requests', inAMinute());
      expect(toApiError(rate)).toMatchObject({ status: 429, type: 'rate_limited', headers: { 'retry-after': '60' } });
      expect(rate.message).toContain('the per-minute requests limit of key k-1 (60 requests)');
      expect(toApiError(new BudgetStoreUnavailableError())).toMatchObject({ status: 503, type: 'budget_store_unavailable' });
      expect(toApiError(new NoHealthyDeploymentError("every deployment of 'gpt' is cooling down", { retryAfterMs: 1200 }))).toMatchObject({
        status: 503,
        type: 'no_healthy_deployment',
        headers: { 'retry-after': '2' },
      });
      expect(toApiError(new InvalidBudgetError(['usd: must be a number']))).toMatchObject({ status: 400, type: 'invalid_request', message: 'usd: must be a number' });
    });
  });
});
