/**
 * The AiModule's error types, as the gateway's own code imports them. They live in common/errors.ts, below the
 * HTTP edge (http/) and the upstream client (upstream/), which map and raise them without importing the
 * module above them (docs/architecture.md).
 */
export * from '../common/errors';
