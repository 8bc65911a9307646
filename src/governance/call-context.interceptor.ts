import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { requestCallContext, runWithCallContext } from './call-context';
import { governanceOf } from './governance-identity';

/**
 * Runs every handler of a request the API auth layer identified inside its call context, so the model calls
 * it makes (streams and agent steps included) reach the ledger and the call gate with their identity.
 */
@Injectable()
export class CallContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.getArgByIndex<FastifyRequest>(0);
    const state = request && governanceOf(request);
    if (!state) return next.handle();
    return new Observable((subscriber) => runWithCallContext(requestCallContext(request, state), () => next.handle().subscribe(subscriber)));
  }
}
