import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

type Target = object;

/**
 * A boolean route decorator (`@SkipAuth()`, `@SkipApiAuth()`) on the handler or its controller, read through
 * the Reflector once per (controller, handler) pair and then remembered: decorators are fixed when the routes
 * are registered, and the Reflector's two metadata reads cost more than the rest of a warm guard decision.
 */
export class RouteFlagLookup {
  private readonly byClass = new WeakMap<Target, WeakMap<Target, boolean>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly metadataKey: string,
  ) {}

  isSet(context: ExecutionContext): boolean {
    const controller = context.getClass();
    const handler = context.getHandler();
    let handlers = this.byClass.get(controller);
    if (!handlers) {
      handlers = new WeakMap();
      this.byClass.set(controller, handlers);
    }
    let set = handlers.get(handler);
    if (set === undefined) {
      set = this.reflector.getAllAndOverride<boolean | undefined>(this.metadataKey, [handler, controller]) === true;
      handlers.set(handler, set);
    }
    return set;
  }
}
