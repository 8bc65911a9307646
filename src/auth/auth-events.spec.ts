import diagnosticsChannel from 'node:diagnostics_channel';
import { forbidden, unauthorized } from './auth-denial';
import {
  AUTH_DECISION_CHANNEL,
  PERMISSION_CACHE_CHANNEL,
  publishAuthAllowed,
  publishAuthDenied,
  publishPermissionCache,
  type AuthDecisionEvent,
} from './auth-events';
import { resolveAuthOptions } from './auth.options';

const options = resolveAuthOptions({ jwtSecret: 's'.repeat(48) });

function collect(channel: string): { messages: unknown[]; stop: () => void } {
  const messages: unknown[] = [];
  const listener = (message: unknown) => messages.push(message);
  diagnosticsChannel.subscribe(channel, listener);
  return { messages, stop: () => diagnosticsChannel.unsubscribe(channel, listener) };
}

describe('auth decision events', () => {
  it('publishes allowed decisions as the same frozen message every time (no allocation per request)', () => {
    const seen = collect(AUTH_DECISION_CHANNEL);
    publishAuthAllowed('jwt');
    publishAuthAllowed('jwt');
    publishAuthAllowed('rbac');
    seen.stop();
    expect(seen.messages).toEqual([
      { guard: 'jwt', outcome: 'allowed', status: 200, code: 'allowed' },
      { guard: 'jwt', outcome: 'allowed', status: 200, code: 'allowed' },
      { guard: 'rbac', outcome: 'allowed', status: 200, code: 'allowed' },
    ]);
    expect(seen.messages[0]).toBe(seen.messages[1]);
    expect(Object.isFrozen(seen.messages[0])).toBe(true);
  });

  it('publishes denials with their status and code, never the detail', () => {
    const seen = collect(AUTH_DECISION_CHANNEL);
    publishAuthDenied('jwt', unauthorized(options, 'token_expired', 'exp 12 < now', true));
    publishAuthDenied('rbac', forbidden(options, 'rbac_denied', 'no permission of role admin'));
    seen.stop();
    expect(seen.messages).toEqual<AuthDecisionEvent[]>([
      { guard: 'jwt', outcome: 'denied', status: 401, code: 'token_expired' },
      { guard: 'rbac', outcome: 'denied', status: 403, code: 'rbac_denied' },
    ]);
  });

  it('publishes permission cache hits and misses', () => {
    const seen = collect(PERMISSION_CACHE_CHANNEL);
    publishPermissionCache(true);
    publishPermissionCache(false);
    seen.stop();
    expect(seen.messages).toEqual([{ hit: true }, { hit: false }]);
  });

  it('publishes nothing once the subscriber left', () => {
    const seen = collect(PERMISSION_CACHE_CHANNEL);
    seen.stop();
    publishPermissionCache(true);
    expect(seen.messages).toEqual([]);
    expect(diagnosticsChannel.channel(PERMISSION_CACHE_CHANNEL).hasSubscribers).toBe(false);
  });
});
