import { Injectable, Logger } from '@nestjs/common';

/** Resolves when the dependency is ready; rejects (or times out) when it is not. */
export type ReadinessCheck = () => Promise<unknown>;

export interface ReadinessReport {
  ready: boolean;
  /** Check name -> 'ok' | 'failing' (or `shutdown: 'draining'`); reasons go to the log, never to the response. */
  checks: Record<string, 'ok' | 'failing' | 'draining'>;
  /** What registered detail sources show beside the checks (the deployments' states), when any has something. */
  details?: Record<string, unknown>;
}

const CHECK_TIMEOUT_MS = 2000;

/**
 * Modules register what /readyz must see working (the RBAC store, the AI providers); the graceful shutdown
 * marks the process draining, after which it is not ready whatever the checks say.
 */
@Injectable()
export class ReadinessService {
  private readonly logger = new Logger('Readiness');
  private readonly checks = new Map<string, ReadinessCheck>();
  private draining = false;
  private readonly details = new Map<string, () => unknown>();

  register(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  /** From now on not ready, so a load balancer or orchestrator stops sending new requests here. */
  markDraining(): void {
    this.draining = true;
  }

  /** A state shown in the report without deciding readiness; `show` answers undefined when it has nothing. */
  registerDetails(name: string, show: () => unknown): void {
    this.details.set(name, show);
  }

  async report(): Promise<ReadinessReport> {
    // No check is run: their answers no longer matter, and a draining process should not call its providers.
    if (this.draining) return { ready: false, checks: { shutdown: 'draining' } };
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => [name, await this.run(name, check)] as const),
    );
    const shown = [...this.details].map(([name, show]) => [name, show()] as const).filter(([, value]) => value !== undefined);
    return {
      ready: entries.every(([, status]) => status === 'ok'),
      checks: Object.fromEntries(entries),
      ...(shown.length > 0 ? { details: Object.fromEntries(shown) } : {}),
    };
  }

  private async run(name: string, check: ReadinessCheck): Promise<'ok' | 'failing'> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: `no answer within ${CHECK_TIMEOUT_MS} ms` })), CHECK_TIMEOUT_MS);
    });
    try {
      await Promise.race([check(), timeout]);
      return 'ok';
    } catch (error) {
      // Only the error's class and code: driver messages can carry connection URLs.
      const { name: kind, code } = error as { name?: string; code?: string };
      this.logger.warn(`${name} is not ready (${[kind, code].filter(Boolean).join(' ') || 'error'})`);
      return 'failing';
    } finally {
      clearTimeout(timer);
    }
  }
}
