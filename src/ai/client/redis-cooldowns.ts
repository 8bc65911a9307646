/**
 * Cool-downs shared by every process on one Redis (docs/decisions.md B18): a process that cools a deployment
 * down writes `<prefix>cooldown:<deployment>` (its end, expiring with it), every process reads those keys every
 * {@link POLL_MS}, so a fleet stops calling the deployment within a second; the probe after a cool-down is
 * claimed with SET NX, so one call of the fleet makes it. Redis unreachable: each process keeps its own view.
 */
import type Redis from 'ioredis';
import { failFastRedis } from '../../common/fail-fast-redis';
import { PROBE_HOLD_MS, type SharedCooldowns } from './deployment-health';

export const POLL_MS = 250;
export const DEFAULT_COOLDOWN_KEY_PREFIX = 'tollgate:deployment:';

const ignore = () => undefined;

export class RedisCooldowns implements SharedCooldowns {
  private readonly redis: Redis;
  private timer?: NodeJS.Timeout;
  private readonly connected: Promise<void>;
  /** Cool-downs seen while Redis was not connected, by deployment: each one's latest end. */
  private readonly unpublished = new Map<string, number>();

  constructor(
    url: string,
    private readonly prefix = DEFAULT_COOLDOWN_KEY_PREFIX,
  ) {
    this.redis = failFastRedis(url);
    this.redis.on('ready', () => {
      for (const [key, until] of this.unpublished) this.write(key, until);
      this.unpublished.clear();
    });
    this.connected = this.redis.connect();
    this.connected.catch(ignore);
  }

  /**
   * Written at once when connected; otherwise kept (the latest end per deployment) and written when the client
   * connects: with the offline queue off, a write before that would be dropped.
   */
  publish(key: string, until: number): void {
    if (this.redis.status === 'ready') this.write(key, until);
    else this.unpublished.set(key, Math.max(until, this.unpublished.get(key) ?? 0));
  }

  private write(key: string, until: number): void {
    const ms = Math.ceil(until - Date.now());
    if (ms > 0) this.redis.set(this.cooldownKey(key), String(until), 'PX', ms).catch(ignore);
  }

  async claimProbe(key: string): Promise<boolean> {
    return (await this.redis.set(this.probeKey(key), String(process.pid), 'PX', PROBE_HOLD_MS, 'NX')) === 'OK';
  }

  releaseProbe(key: string): void {
    this.redis.del(this.probeKey(key)).catch(ignore);
  }

  follow(keys: readonly string[], seen: (key: string, until: number) => void): Promise<void> {
    if (keys.length === 0) return Promise.resolve();
    const names = keys.map((key) => this.cooldownKey(key));
    const poll = () =>
      this.redis.mget(names).then((values) => {
        values.forEach((value, index) => {
          if (value !== null) seen(keys[index], Number(value));
        });
      }, ignore);
    this.timer = setInterval(poll, POLL_MS);
    this.timer.unref();
    // The first reading waits for the connection (commands fail at once before it, with the offline queue off).
    return this.connected.then(poll, ignore);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.redis.disconnect();
  }

  private cooldownKey(key: string): string {
    return `${this.prefix}cooldown:${key}`;
  }

  private probeKey(key: string): string {
    return `${this.prefix}probe:${key}`;
  }
}
