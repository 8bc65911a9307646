import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { SKIP_AUTH_KEY } from './auth.constants';

type Target = object;

/**
 * `@SkipAuth()` on the handler or its controller, read through the Reflector once per (controller, handler)
 * pair and then remembered: decorators are fixed when the routes are registered, and the Reflector's two
 * metadata reads cost more than the rest of a warm guard decision.
 */
export class SkipAuthLookup {
  private readonly byClass = new WeakMap<Target, WeakMap<Target, boolean>>();

  constructor(private readonly reflector: Reflector) {}

  isSkipped(context: ExecutionContext): boolean {
    const controller = context.getClass();
    const handler = context.getHandler();
    let handlers = this.byClass.get(controller);
    if (!handlers) {
      handlers = new WeakMap();
      this.byClass.set(controller, handlers);
    }
    let skipped = handlers.get(handler);
    if (skipped === undefined) {
      skipped = this.reflector.getAllAndOverride<boolean | undefined>(SKIP_AUTH_KEY, [handler, controller]) === true;
      handlers.set(handler, skipped);
    }
    return skipped;
  }
}
