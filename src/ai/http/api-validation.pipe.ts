import { type ArgumentMetadata, type Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import { apiRequestError } from '../../http/api-error';

/** One message naming every bad field, e.g. `max_tokens must be an integer; unknown field "foo"`. */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).map(([constraint, message]) =>
      constraint === 'whitelistValidation' ? `unknown field "${field}"` : message.replace(error.property, field),
    );
    return [...own, ...describeValidationErrors(error.children ?? [], field)];
  });
}

interface PropertyRules {
  /** `@IsOptional()` and friends: the rules below apply only when every condition holds. */
  conditions: Array<(object: object, value: unknown) => boolean>;
  checks: Array<{ validator: ValidatorConstraintInterface; constraints: unknown[]; each: boolean }>;
}

type BodyRules = Map<string, PropertyRules>;

/**
 * A DTO's class-validator rules, read once from class-validator's own metadata, or null when the DTO uses
 * anything beyond plain synchronous property rules (nested objects, groups, `@IsDefined`, async
 * validators...): such a DTO always takes the full pipe.
 */
export function readBodyRules(metatype: Type): BodyRules | null {
  const storage = getMetadataStorage();
  // The same selection ValidationPipe's validator makes with our options (no groups, not `always`).
  const metadatas = storage.getTargetValidationMetadatas(metatype, '', false, false, undefined);
  if (metadatas.length === 0) return null;
  const rules: BodyRules = new Map();
  for (const metadata of metadatas) {
    if (metadata.validateIf || metadata.always) return null;
    let property = rules.get(metadata.propertyName);
    if (!property) rules.set(metadata.propertyName, (property = { conditions: [], checks: [] }));
    if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      property.conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
      continue;
    }
    if (metadata.type !== ValidationTypes.CUSTOM_VALIDATION) return null;
    for (const constraint of storage.getTargetValidatorConstraints(metadata.constraintCls)) {
      if (constraint.async) return null;
      property.checks.push({ validator: constraint.instance, constraints: metadata.constraints, each: metadata.each });
    }
  }
  // A declared field without rules is an unknown field to the whitelist on every request.
  if (Object.keys(new metatype()).some((field) => !rules.has(field))) return null;
  return rules;
}

/**
 * The DTO instance ValidationPipe (whitelist, forbidNonWhitelisted, transform) would return for `value`,
 * or undefined when this quick check cannot vouch for it. It vouches only for a JSON object whose values
 * are primitives or arrays of primitives, with only declared fields, every one passing the DTO's own
 * class-validator constraints: for such a body class-transformer's copy is a field-by-field copy and the
 * pipe's prototype-key and sparse-array clean-ups change nothing. Everything else, every invalid body
 * included, goes through the full pipe, so its errors are the pipe's own.
 */
export function acceptPlainBody(metatype: Type, rules: BodyRules, value: unknown): object | undefined {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const entity = new metatype() as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (!rules.has(key)) return undefined;
    const field = (value as Record<string, unknown>)[key];
    if (Array.isArray(field)) {
      for (let i = 0; i < field.length; i++) if (!isPrimitive(field[i])) return undefined;
      entity[key] = field.slice();
    } else if (isPrimitive(field)) {
      entity[key] = field;
    } else {
      return undefined;
    }
  }
  for (const [property, { conditions, checks }] of rules) {
    const field = entity[property];
    if (!conditions.every((condition) => condition(entity, field))) continue;
    const args: ValidationArguments = { targetName: metatype.name, property, object: entity, value: field, constraints: [] };
    for (const { validator, constraints, each } of checks) {
      args.constraints = constraints;
      const valid = each && Array.isArray(field) ? field.every((item) => validator.validate(item, args)) : validator.validate(field, args);
      if (valid !== true) return undefined;
    }
  }
  return entity;
}

function isPrimitive(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/**
 * ValidationPipe with a quick accept for plain valid bodies: class-transformer's copy and class-validator's
 * error bookkeeping were the largest single cost of a /v1 request, and a valid body needs neither.
 */
export class ApiValidationPipe extends ValidationPipe {
  private readonly bodyRules = new Map<Type, BodyRules | null>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.type === 'body' ? metadata.metatype : undefined;
    if (metatype && this.toValidate(metadata)) {
      let rules = this.bodyRules.get(metatype);
      if (rules === undefined) this.bodyRules.set(metatype, (rules = readBodyRules(metatype)));
      const accepted = rules ? acceptPlainBody(metatype, rules, value) : undefined;
      if (accepted) return accepted;
    }
    return super.transform(value, metadata);
  }
}

/** Rejects unknown fields and wrong types with 400 `invalid_request` naming each field. */
export function createApiValidationPipe(): ValidationPipe {
  return new ApiValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => apiRequestError(400, describeValidationErrors(errors).join('; ')),
  });
}
