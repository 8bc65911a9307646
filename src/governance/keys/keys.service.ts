import { Inject, Injectable } from '@nestjs/common';
import { InvalidRequestError } from '../../common/errors';
import { KeyNotFoundError } from '../governance-errors';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { generateApiKey, isApiKeyId } from './api-key-format';
import { type ApiKeyRecord, type FieldLabels, type KeySpec, applyKeyChanges, validateKeySpec } from './api-key-record';
import { type KeyStore, mutableSettingsOf } from './key-store';

export const KEY_STORE = Symbol('tollgate:key-store');

/** A create or update request that breaks a rule: 400 on the REST API, exit 2 on the CLI; lists every problem. */
export class KeySpecError extends InvalidRequestError {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

/** Key administration shared by the CLI and the admin REST API. */
@Injectable()
export class KeysService {
  constructor(
    @Inject(KEY_STORE) private readonly store: KeyStore,
    @Inject(ApiKeyAuthenticator) private readonly authenticator?: ApiKeyAuthenticator,
    private readonly now: () => number = Date.now,
  ) {}

  /** The new record and the key itself, which exists nowhere else: show it once. */
  async create(spec: KeySpec, labels: FieldLabels): Promise<{ key: string; record: ApiKeyRecord }> {
    const now = this.now();
    const { settings, problems } = validateKeySpec(spec, 'create', now, labels);
    if (problems.length) throw new KeySpecError(problems);
    const { id, key, hash } = generateApiKey();
    const record = { ...settings, id, hash, createdAt: new Date(now).toISOString() } as ApiKeyRecord;
    await this.store.create(record);
    return { key, record };
  }

  list(filter: { tenant?: string } = {}): Promise<ApiKeyRecord[]> {
    return this.store.list(filter);
  }

  async get(id: string): Promise<ApiKeyRecord> {
    const record = isApiKeyId(id) ? await this.store.get(id) : undefined;
    if (!record) throw new KeyNotFoundError(id);
    return record;
  }

  async update(id: string, spec: KeySpec, labels: FieldLabels): Promise<ApiKeyRecord> {
    const { settings, problems } = validateKeySpec(spec, 'update', this.now(), labels);
    if (problems.length) throw new KeySpecError(problems);
    const current = await this.get(id);
    const updated = await this.store.update(id, mutableSettingsOf(applyKeyChanges(current, settings)));
    if (!updated) throw new KeyNotFoundError(id);
    this.authenticator?.forget(updated.hash);
    return updated;
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  async revoke(id: string): Promise<ApiKeyRecord> {
    const revoked = isApiKeyId(id) ? await this.store.revoke(id, new Date(this.now()).toISOString()) : undefined;
    if (!revoked) throw new KeyNotFoundError(id);
    this.authenticator?.forget(revoked.hash);
    return revoked;
  }
}
