/**
 * Whether the process can still open file descriptors, for /healthz. A process at its descriptor limit
 * still answers on the connections it holds, yet every new socket fails (EMFILE, or ENFILE for the whole
 * system): every model call fails while the process looks alive. Two signs, either enough: a connect of
 * any undici client (providers, search tools, image downloads) failed so in the last RECENT_MS, or opening
 * one descriptor now fails so. Then liveness fails, and an orchestrator restarts the process.
 */
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { closeSync, openSync } from 'node:fs';
import { devNull } from 'node:os';

/** undici publishes every failed connect here, whichever client or agent made it. */
const CONNECT_ERROR_CHANNEL = 'undici:client:connectError';

/** How long one failed connect keeps liveness failing: longer than a probe period, shorter than a restart policy's patience. */
export const RECENT_EXHAUSTION_MS = 30_000;

const EXHAUSTION_CODES = new Set(['EMFILE', 'ENFILE']);

@Injectable()
export class DescriptorLiveness implements OnModuleDestroy {
  private lastExhaustedAt = Number.NEGATIVE_INFINITY;

  constructor() {
    subscribe(CONNECT_ERROR_CHANNEL, this.onConnectError);
  }

  /** True when descriptors ran out recently or run out now. */
  exhausted(now = Date.now()): boolean {
    if (now - this.lastExhaustedAt < RECENT_EXHAUSTION_MS) return true;
    return !canOpenDescriptor();
  }

  onModuleDestroy(): void {
    unsubscribe(CONNECT_ERROR_CHANNEL, this.onConnectError);
  }

  private readonly onConnectError = (message: unknown): void => {
    if (isExhaustion((message as { error?: unknown }).error)) this.lastExhaustedAt = Date.now();
  };
}

/** One descriptor opened and closed at once (synchronous: a saturated thread pool must not delay the answer). */
function canOpenDescriptor(): boolean {
  try {
    closeSync(openSync(devNull, 'r'));
    return true;
  } catch (error) {
    return !isExhaustion(error);
  }
}

function isExhaustion(error: unknown): boolean {
  return EXHAUSTION_CODES.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}
