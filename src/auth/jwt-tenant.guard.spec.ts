import 'reflect-metadata';
import { createHmac } from 'node:crypto';
import { Controller, Get } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { AuthDeniedException } from './auth-denial';
import { SkipAuth } from './auth.decorators';
import { resolveAuthOptions } from './auth.options';
import { JwtTenantGuard } from './jwt-tenant.guard';
import { AUTH_SKIPPED, getAuthContext } from './request-context';

const SECRET = 'guard-spec-secret-guard-spec-secret-0123456789';

function sign(payload: object): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}`;
  return `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`;
}

@Controller('api/v1/:slug')
class OpenController {
  @Get('a')
  a() {}
}
SkipAuth()(OpenController);

@Controller('api/v1/:slug')
class ClosedController {
  @Get('b')
  b() {}
}

function contextFor(request: object, controller: new () => object, handler: (...args: never[]) => unknown) {
  const host = new ExecutionContextHost([request, { header: () => undefined }, undefined], controller, handler);
  host.setType('http');
  return host;
}

describe('JwtTenantGuard', () => {
  const guard = new JwtTenantGuard(resolveAuthOptions({ jwtSecret: SECRET, validatePathnameSlug: true }, {}), new Reflector());
  const token = sign({ user_id: 7, pathname_slugs: ['North'], role_ids: [3, 'admin'], exp: Math.floor(Date.now() / 1000) + 600 });
  const request = () => ({ method: 'GET', url: '/api/v1/NORTH/b', headers: { authorization: `Bearer ${token}` }, raw: {} });

  it('maps the claims of a token once and hands every request with that token the same frozen context', () => {
    const first = request();
    const second = request();
    expect(guard.canActivate(contextFor(first, ClosedController, ClosedController.prototype.b))).toBe(true);
    expect(guard.canActivate(contextFor(second, ClosedController, ClosedController.prototype.b))).toBe(true);
    const context = getAuthContext(first);
    expect(context).toMatchObject({ userId: 7, pathnameSlugs: ['North'], roleIds: ['3', 'admin'] });
    expect(getAuthContext(second)).toBe(context);
    expect(Object.isFrozen(context)).toBe(true);
    expect(Object.isFrozen(context!.roleIds)).toBe(true);
    expect(() => (context!.roleIds as string[]).push('root')).toThrow(TypeError);
  });

  it('freezes the slug list it builds from a single-string claim too', () => {
    const single = sign({ user_id: 8, pathname_slugs: 'north', exp: Math.floor(Date.now() / 1000) + 600 });
    const req = { method: 'GET', url: '/api/v1/north/b', headers: { authorization: `Bearer ${single}` }, raw: {} };
    expect(guard.canActivate(contextFor(req, ClosedController, ClosedController.prototype.b))).toBe(true);
    expect(getAuthContext(req)!.pathnameSlugs).toEqual(['north']);
    expect(Object.isFrozen(getAuthContext(req)!.pathnameSlugs)).toBe(true);
  });

  it('still denies a slug the shared context does not grant', () => {
    const other = { ...request(), url: '/api/v1/south/b' };
    expect(() => guard.canActivate(contextFor(other, ClosedController, ClosedController.prototype.b))).toThrow(
      expect.objectContaining({ code: 'slug_denied' }),
    );
  });

  it('answers 400 invalid_path, before the token, for a path the router would read differently', () => {
    for (const url of ['/api/v1/north/b/..%2Fsecret', '/api/v1/north/%2e%2E/b', '/api/v1/north/b/..%5Cx', '/api/v1/north/../b']) {
      const headers: Record<string, string> = {};
      const reply = { header: (name: string, value: string) => (headers[name] = value) };
      const pathOnly = { method: 'GET', url, headers: {}, raw: {} };
      const host = new ExecutionContextHost([pathOnly, reply, undefined], ClosedController, ClosedController.prototype.b);
      host.setType('http');
      let denial: unknown;
      try {
        guard.canActivate(host);
      } catch (error) {
        denial = error;
      }
      expect([url, denial]).toEqual([url, expect.objectContaining({ code: 'invalid_path' })]);
      expect((denial as AuthDeniedException).getStatus()).toBe(400);
      expect((denial as AuthDeniedException).getResponse()).toEqual({ error: 'Bad request', status: 400, code: 'invalid_path' });
      expect(headers).toEqual({ 'cache-control': 'no-store' });
    }
  });

  it('leaves the path alone when neither the slug check nor RBAC reads it', () => {
    const plain = new JwtTenantGuard(resolveAuthOptions({ jwtSecret: SECRET }, {}), new Reflector());
    const req = { method: 'GET', url: '/api/v1/north/b/a%2Fb', headers: { authorization: `Bearer ${token}` }, raw: {} };
    expect(plain.canActivate(contextFor(req, ClosedController, ClosedController.prototype.b))).toBe(true);
  });

  it('honours @SkipAuth() on the controller on every call, without a token', () => {
    for (let call = 0; call < 2; call++) {
      const anonymous = { method: 'GET', url: '/api/v1/north/a', headers: {}, raw: {} } as Record<string | symbol, unknown>;
      expect(guard.canActivate(contextFor(anonymous, OpenController, OpenController.prototype.a))).toBe(true);
      expect(anonymous[AUTH_SKIPPED]).toBe(true);
    }
    const anonymous = { method: 'GET', url: '/api/v1/north/b', headers: {}, raw: {} };
    expect(() => guard.canActivate(contextFor(anonymous, ClosedController, ClosedController.prototype.b))).toThrow(
      expect.objectContaining({ code: 'missing_token' }),
    );
  });
});
