import diagnosticsChannel from 'node:diagnostics_channel';
import { forbidden } from '../auth/auth-denial';
import { AUTH_DECISION_CHANNEL, PERMISSION_CACHE_CHANNEL, publishAuthAllowed, publishAuthDenied, publishPermissionCache } from '../auth/auth-events';
import { resolveAuthOptions } from '../auth/auth.options';
import { MetricsService } from './metrics.service';

const options = resolveAuthOptions({ jwtSecret: 'm'.repeat(48) });

function value(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('MetricsService', () => {
  it('copies the tallies of auth decisions and cache outcomes into counters at scrape time', async () => {
    const metrics = new MetricsService();
    publishAuthAllowed('jwt');
    publishAuthAllowed('jwt');
    publishAuthDenied('rbac', forbidden(options, 'rbac_unavailable', 'store down'));
    publishPermissionCache(false);
    const first = await metrics.render();
    expect(value(first, 'tollgate_auth_decisions_total{guard="jwt",outcome="allowed",status="200",code="allowed"}')).toBe(2);
    expect(value(first, 'tollgate_auth_decisions_total{guard="rbac",outcome="denied",status="403",code="rbac_unavailable"}')).toBe(1);
    expect(value(first, 'tollgate_rbac_permission_cache_total{result="miss"}')).toBe(1);
    expect(value(first, 'tollgate_rbac_permission_cache_total{result="hit"}')).toBe(0);
    // A second scrape reports totals, not the increments since the first.
    publishPermissionCache(true);
    const second = await metrics.render();
    expect(value(second, 'tollgate_rbac_permission_cache_total{result="miss"}')).toBe(1);
    expect(value(second, 'tollgate_rbac_permission_cache_total{result="hit"}')).toBe(1);
    expect(value(second, 'tollgate_auth_decisions_total{guard="jwt",outcome="allowed",status="200",code="allowed"}')).toBe(2);
    metrics.onModuleDestroy();
  });

  it('keeps each instance to its own registry and leaves the channels when destroyed', async () => {
    const one = new MetricsService();
    const two = new MetricsService();
    expect(one.registry).not.toBe(two.registry);
    one.onModuleDestroy();
    two.onModuleDestroy();
    expect(diagnosticsChannel.channel(AUTH_DECISION_CHANNEL).hasSubscribers).toBe(false);
    expect(diagnosticsChannel.channel(PERMISSION_CACHE_CHANNEL).hasSubscribers).toBe(false);
  });

  it('labels HTTP requests with the route given, status as text', async () => {
    const metrics = new MetricsService();
    metrics.observeHttpRequest('GET', '/v1/models', 200, 0.004);
    const text = await metrics.render();
    expect(value(text, 'tollgate_http_requests_total{method="GET",route="/v1/models",status="200"}')).toBe(1);
    expect(value(text, 'tollgate_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/models",status="200"}')).toBe(1);
    expect(value(text, 'tollgate_http_request_duration_seconds_bucket{le="0.0025",method="GET",route="/v1/models",status="200"}')).toBe(0);
    metrics.onModuleDestroy();
  });
});
