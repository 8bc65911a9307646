import { TollgateError } from '../common/errors';

/** A bearer shaped like an API key that is malformed, unknown, revoked or expired: 401 (never says which). */
export class InvalidKeyError extends TollgateError {
  override readonly type: string = 'invalid_key';
  constructor() {
    super('The API key is invalid, revoked or expired.');
  }
}

/** An admin operation named a key id no store holds: 404. */
export class KeyNotFoundError extends TollgateError {
  override readonly type: string = 'key_not_found';
  constructor(id: string) {
    super(`No API key with id ${id}.`);
  }
}

/** The caller's allow-lists (key, tenant, roles) do not cover the requested provider/model: 403. */
export class ModelNotAllowedError extends TollgateError {
  override readonly type: string = 'model_not_allowed';
  constructor(readonly model: string) {
    super(`The model ${model} is not allowed for this caller.`);
  }
}

/**
 * The caller is held to a dollar budget and the model has no price: its calls would pass the budget at cost 0
 * (403). The operator prices it, or lets unpriced models through explicitly.
 */
export class ModelNotPricedError extends TollgateError {
  override readonly type: string = 'model_not_priced';
  constructor(readonly model: string) {
    super(
      `The model ${model} has no price, and this caller is held to a dollar budget: price it under governance.pricing.models, or admit unpriced models with governance.pricing.allow_unpriced: true.`,
    );
  }
}

/**
 * The caller is authenticated but not an administrator (admin token or an admin role), or administers one tenant
 * and named another: 403.
 */
export class AdminRequiredError extends TollgateError {
  override readonly type: string = 'forbidden';
  constructor(message = 'This operation needs the admin token or an admin role.') {
    super(message);
  }
}
