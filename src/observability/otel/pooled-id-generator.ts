/**
 * Trace and span ids cut from a pool of random bytes refilled 4 KiB at a time, where the SDK's RandomIdGenerator
 * draws Math.random and writes each id word by word into a buffer (docs/decisions.md C14). The bytes are
 * uniformly random, so sampling by ratio, which reads the trace id, stays what it was.
 */
import { randomFillSync } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-node';

const POOL_BYTES = 4096;
const TRACE_ID_BYTES = 16;
const SPAN_ID_BYTES = 8;
/** W3C trace context gives an all-zero id no meaning: such a draw is discarded. */
const INVALID_IDS: Readonly<Record<number, string>> = { [TRACE_ID_BYTES]: '0'.repeat(2 * TRACE_ID_BYTES), [SPAN_ID_BYTES]: '0'.repeat(2 * SPAN_ID_BYTES) };

export class PooledIdGenerator implements IdGenerator {
  private readonly pool = Buffer.allocUnsafe(POOL_BYTES);
  private offset = POOL_BYTES;

  generateTraceId(): string {
    return this.take(TRACE_ID_BYTES);
  }

  generateSpanId(): string {
    return this.take(SPAN_ID_BYTES);
  }

  private take(bytes: number): string {
    if (this.offset + bytes > POOL_BYTES) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const start = this.offset;
    this.offset = start + bytes;
    const id = this.pool.toString('hex', start, start + bytes);
    return id === INVALID_IDS[bytes] ? this.take(bytes) : id;
  }
}
