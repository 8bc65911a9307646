import { ValidationError, ValidationPipe } from '@nestjs/common';
import { apiRequestError } from './api-error';

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

/** Rejects unknown fields and wrong types with 400 `invalid_request` naming each field. */
export function createApiValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => apiRequestError(400, describeValidationErrors(errors).join('; ')),
  });
}
