import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  All,
  BadRequestException,
  Controller,
  Get,
  Injectable,
  Module,
  Options,
  Param,
  Post,
  Req,
  UseGuards,
  type LoggerService,
  type Type,
} from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { FastifyRequest } from 'fastify';
import { sign } from 'jsonwebtoken';
import {
  AUTH_CONTEXT,
  AUTH_DECISION_CHANNEL,
  AuthModule,
  AuthOptionsError,
  AuthPayload,
  JwtTenantGuard,
  PathnameSlugs,
  PERMISSION_CACHE_CHANNEL,
  RbacGuard,
  RbacService,
  SkipAuth,
  Subdomain,
  TenantId,
  UserId,
  currentTenantId,
  currentUserId,
  getPathnameSlugs,
  getPayload,
  getSubdomain,
  getTenantId,
  getUserId,
  hasPathnameSlugAccess,
  isAuthenticated,
  type AuthContext,
  type AuthDecisionEvent,
  type AuthModuleOptions,
  type AuthRequest,
  type JwtAlgorithm,
  type JwtPayload,
  type PermissionCacheEvent,
} from 'tollgate/auth';

/**
 * A host Nest app (Fastify) that uses Tollgate the way another project would: through the package's auth entry
 * (`tollgate/auth` -> dist/src/auth/index.js), its own modules, controllers and config provider.
 * Dot-segment paths go over a real loopback socket, since app.inject resolves them like a browser.
 */

const SECRET = 'host-app-e2e-secret-that-is-longer-than-32-bytes';
const HOST = 'acme.example.com';
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Every line any Nest logger wrote during the run, so tests can look for what must (not) be logged. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  private push(level: string, message: unknown, rest: unknown[]) {
    this.lines.push([level, message, ...rest].map((part) => (part instanceof Error ? part.stack : String(part))).join(' '));
  }
  log(message: unknown, ...rest: unknown[]) {
    this.push('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.push('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.push('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.push('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.push('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.push('fatal', message, rest);
  }
}
const logs = new CapturingLogger();

/**
 * A signed HS256 token for the default claims plus `claims`; a claim set to undefined is left out, and an
 * `exp` key in `claims` (even undefined) replaces the default lifetime.
 */
function token(claims: JwtPayload = {}, secret = SECRET, algorithm: JwtAlgorithm = 'HS256'): string {
  const merged: JwtPayload = { user_id: 42, tenant_id: 'acme-co', subdomain: 'acme', pathname_slugs: ['north', 'South'], ...claims };
  const payload = Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined));
  return sign(payload, secret, { algorithm, ...('exp' in claims ? {} : { expiresIn: 600 }) });
}

const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

interface Reply {
  status: number;
  headers: Record<string, unknown>;
  body: any;
  text: string;
}

async function inject(
  app: NestFastifyApplication,
  url: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'POST' | 'OPTIONS' = 'GET',
): Promise<Reply> {
  const response = await app.inject({ method, url, headers });
  let body: unknown;
  try {
    body = response.body ? JSON.parse(response.body) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, headers: response.headers, body, text: response.body };
}

/** A request over a real socket: the path is sent byte for byte, dot segments included. */
function overSocket(app: NestFastifyApplication, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
  const { port } = app.getHttpServer().address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined, text });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function boot(root: Type, listen = false): Promise<NestFastifyApplication> {
  const moduleRef = await Test.createTestingModule({ imports: [root] }).setLogger(logs).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: logs });
  if (listen) await app.listen(0, '127.0.0.1');
  else await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

// ---------------------------------------------------------------- the host application's own code

/** The host's configuration service, in a module of its own (what @nestjs/config would give). */
@Injectable()
class AppConfig {
  private readonly values: Record<string, string> = { JWT_SECRET: SECRET, TENANT_HEADER: 'X-Org-Id' };
  get(key: string): string | undefined {
    return this.values[key];
  }
}

@Module({ providers: [AppConfig], exports: [AppConfig] })
class AppConfigModule {}

/** What the custom validator saw, so tests can tell whether (and with what) it ran. */
const validatorCalls: Array<{ userId: unknown; url: string }> = [];

async function hostValidator(payload: JwtPayload, request: AuthRequest): Promise<boolean | undefined> {
  validatorCalls.push({ userId: payload.user_id, url: request.url });
  switch (payload.mode) {
    case 'reject':
      return false;
    case 'undefined':
      return undefined;
    case 'async':
      return new Promise((resolve) => setTimeout(() => resolve(true), 5));
    case 'throw':
      throw new Error('validator exploded: db password hunter2');
    default:
      return request.headers['x-deny'] === undefined;
  }
}

@Controller()
class TenantController {
  @Get('api/v1/:slug/whoami')
  whoami(
    @Req() req: FastifyRequest,
    @Param('slug') slug: string,
    @UserId() userId: unknown,
    @TenantId() tenantId: unknown,
    @Subdomain() subdomain: unknown,
    @PathnameSlugs() slugs: unknown,
    @AuthPayload() payload: JwtPayload | undefined,
  ) {
    return {
      decorators: { userId, tenantId, subdomain, slugs, payloadUserId: payload?.user_id },
      accessors: {
        authenticated: isAuthenticated(req),
        userId: getUserId(req),
        tenantId: getTenantId(req),
        subdomain: getSubdomain(req),
        slugs: getPathnameSlugs(req),
        currentUserId: currentUserId(req),
        currentTenantId: currentTenantId(req),
        payloadUserId: getPayload(req)?.user_id,
        slugAccess: hasPathnameSlugAccess(req, slug),
        upperSlugAccess: hasPathnameSlugAccess(req, slug.toUpperCase()),
        otherSlugAccess: hasPathnameSlugAccess(req, 'nowhere'),
        rawUserId: (req.raw as unknown as Record<symbol, AuthContext | undefined>)[AUTH_CONTEXT]?.userId,
      },
    };
  }

  @Options('api/v1/:slug/whoami')
  preflight() {
    return { preflight: true };
  }

  @All('api/v1/:slug/files/*')
  files(@Req() req: FastifyRequest) {
    return { url: req.url, userId: getUserId(req) };
  }

  @Get('me')
  me(@UserId() userId: unknown, @PathnameSlugs() slugs: string[]) {
    return { userId, slugs };
  }

  @Get('boom')
  boom() {
    throw new BadRequestException('the route itself failed');
  }
}

function publicView(req: FastifyRequest) {
  return { public: true, authenticated: isAuthenticated(req), userId: getUserId(req) ?? null };
}

@Controller()
class PublicController {
  @Get('health')
  health(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @Get('healthz')
  healthz(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @Get('public')
  publicRoot(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @Get('public/*')
  publicAny(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @Get('publicity')
  publicity(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @Get('docs')
  docs(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @Get('docs/*')
  docsAny(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @Get('docsx')
  docsx(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @Get('static/*')
  staticAny(@Req() req: FastifyRequest) {
    return publicView(req);
  }

  @SkipAuth()
  @Get('open')
  open(@Req() req: FastifyRequest, @UserId() userId: unknown) {
    return { public: true, authenticated: isAuthenticated(req), userId: userId ?? null };
  }
}

@SkipAuth()
@Controller('status')
class StatusController {
  @Get()
  status(@Req() req: FastifyRequest) {
    return publicView(req);
  }
}

// ---------------------------------------------------------------- app A: forRootAsync from the host's config, global guards

@Module({
  imports: [
    AuthModule.forRootAsync({
      imports: [AppConfigModule],
      inject: [AppConfig],
      useFactory: async (config: AppConfig): Promise<AuthModuleOptions> => ({
        jwtSecret: config.get('JWT_SECRET')!,
        tenantIdHeaderName: config.get('TENANT_HEADER'),
        validateSubdomain: true,
        validatePathnameSlug: true,
        validateTenantId: true,
        debugMode: false,
        skipPaths: ['/health', '/public/*', '%r{^/docs(/.*)?$}', /^\/static\//],
        customPayloadValidator: hostValidator,
      }),
    }),
  ],
  controllers: [TenantController, PublicController, StatusController],
})
class HostAppModule {}

describe('host app: AuthModule.forRootAsync with global guards', () => {
  let app: NestFastifyApplication;
  const good = (claims: JwtPayload = {}, extra: Record<string, string> = {}) => ({
    host: HOST,
    'x-org-id': 'acme-co',
    ...bearer(token(claims)),
    ...extra,
  });

  beforeAll(async () => {
    app = await boot(HostAppModule, true);
  });
  afterAll(async () => {
    await app.close();
  });
  beforeEach(() => {
    validatorCalls.length = 0;
  });

  describe('the context inside a route', () => {
    it('fills the param decorators and the accessors', async () => {
      const res = await inject(app, '/api/v1/north/whoami', good());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        decorators: { userId: 42, tenantId: 'acme-co', subdomain: 'acme', slugs: ['north', 'South'], payloadUserId: 42 },
        accessors: {
          authenticated: true,
          userId: 42,
          tenantId: 'acme-co',
          subdomain: 'acme',
          slugs: ['north', 'South'],
          currentUserId: 42,
          currentTenantId: 'acme-co',
          payloadUserId: 42,
          slugAccess: true,
          upperSlugAccess: true,
          otherSlugAccess: false,
          rawUserId: 42,
        },
      });
      expect(validatorCalls).toEqual([{ userId: 42, url: '/api/v1/north/whoami' }]);
    });

    it('matches the slug case-insensitively, in the check and in hasPathnameSlugAccess', async () => {
      const res = await inject(app, '/api/v1/SOUTH/whoami', good());
      expect(res.status).toBe(200);
      expect(res.body.accessors).toMatchObject({ slugAccess: true, upperSlugAccess: true });
    });

    it('turns a single string slug claim into a one-element array', async () => {
      const res = await inject(app, '/api/v1/north/whoami', good({ pathname_slugs: 'north' }));
      expect(res.status).toBe(200);
      expect(res.body.decorators.slugs).toEqual(['north']);
      expect(res.body.accessors.slugs).toEqual(['north']);
    });

    it('accepts the Bearer scheme in any case, with surrounding whitespace', async () => {
      const res = await inject(app, '/me', { host: HOST, 'x-org-id': 'acme-co', authorization: `  bEaReR   ${token()}  ` });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ userId: 42, slugs: ['north', 'South'] });
    });

    it('does not swallow an exception thrown by the route', async () => {
      const res = await inject(app, '/boom', good());
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('the route itself failed');
    });
  });

  describe('skip paths and @SkipAuth', () => {
    it.each(['/health', '/health?probe=1', '/public', '/public/', '/public/a/b', '/docs', '/docs/api/v1', '/static/app.js', '/open', '/status'])(
      '%s passes without a token and without a context',
      async (path) => {
        const res = await inject(app, path);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ public: true, authenticated: false, userId: null });
      },
    );

    it('skips before any JWT work: a garbage or expired token is ignored, a valid one is not read', async () => {
      expect((await inject(app, '/health', bearer('not.a.token'))).status).toBe(200);
      expect((await inject(app, '/open', bearer(token({ exp: nowSeconds() - 60 })))).status).toBe(200);
      const withValid = await inject(app, '/open', good());
      expect(withValid.body).toEqual({ public: true, authenticated: false, userId: null });
      expect(validatorCalls).toEqual([]);
    });

    it.each(['/healthz', '/publicity', '/docsx'])('%s is not a skip path: 401 without a token', async (path) => {
      const res = await inject(app, path);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('missing_token');
    });

    it('does not let a dot segment climb out of a skipped prefix', async () => {
      const res = await overSocket(app, '/public/../api/v1/north/whoami', { host: HOST });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_path');
    });
  });

  describe('CORS preflight', () => {
    it('passes OPTIONS without a token (skipPreflight defaults to true)', async () => {
      const res = await inject(app, '/api/v1/north/whoami', { host: 'not-even-a-tenant' }, 'OPTIONS');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ preflight: true });
    });
  });

  describe('401 responses (docs/decisions.md A6)', () => {
    it('no token: default body with code, WWW-Authenticate: Bearer, Cache-Control: no-store, no detail', async () => {
      const res = await inject(app, '/api/v1/north/whoami', { host: HOST, 'x-org-id': 'acme-co' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Authentication required', status: 401, code: 'missing_token' });
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it.each([
      ['Basic dXNlcjpwYXNz', 'invalid_authorization_header'],
      ['Bearer', 'invalid_authorization_header'],
      ['Bearer    ', 'invalid_authorization_header'],
      ['Token abc', 'invalid_authorization_header'],
    ])('Authorization %p -> %s, challenge without error', async (authorization, code) => {
      const res = await inject(app, '/me', { host: HOST, 'x-org-id': 'acme-co', authorization });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Authentication required', status: 401, code });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it.each([
      ['an expired token', () => token({ exp: nowSeconds() - 60 }), 'token_expired'],
      ['a token signed with another secret', () => token({}, 'some-other-secret-that-is-also-long-enough'), 'invalid_signature'],
      ['an HS512 token', () => token({}, SECRET, 'HS512'), 'invalid_algorithm'],
      ['garbage', () => 'a.b.c', 'malformed_token'],
      ['a token without exp', () => token({ exp: undefined }), 'invalid_claims'],
      ['a token without user_id', () => token({ user_id: null }), 'invalid_claims'],
      ['a token without the subdomain claim the check needs', () => token({ subdomain: '' }), 'invalid_claims'],
      ['a token without the tenant_id claim the check needs', () => token({ tenant_id: undefined }), 'invalid_claims'],
      ['an oversized token', () => token({ filler: 'x'.repeat(9000) }), 'token_too_large'],
      [
        'an alg:none token',
        () => `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ user_id: 1, exp: nowSeconds() + 60 })).toString('base64url')}.`,
        'invalid_algorithm',
      ],
    ])('%s -> 401 %s with error="invalid_token"', async (_, make, code) => {
      const res = await inject(app, '/api/v1/north/whoami', { host: HOST, 'x-org-id': 'acme-co', ...bearer(make()) });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Authentication required', status: 401, code });
      expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('401 wins over every 403: an expired token on a foreign host', async () => {
      const res = await inject(app, '/api/v1/nowhere/whoami', { host: 'globex.example.com', ...bearer(token({ exp: nowSeconds() - 1 })) });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('token_expired');
    });
  });

  describe('tenant checks (docs/decisions.md A5) and their order', () => {
    const forbidden = (code: string) => ({ error: 'Access denied', status: 403, code });

    it('subdomain: the Host header decides, case-insensitively and without the port', async () => {
      expect((await inject(app, '/me', good({}, { host: 'ACME.Example.com:8443' }))).status).toBe(200);
      for (const host of ['globex.example.com', 'example.com', 'localhost', '127.0.0.1:3000']) {
        const res = await inject(app, '/me', good({}, { host }));
        expect(res.status).toBe(403);
        expect(res.body).toEqual(forbidden('subdomain_mismatch'));
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers['www-authenticate']).toBeUndefined();
      }
    });

    it('subdomain: a forged X-Forwarded-Host is ignored without trustProxy', async () => {
      const forged = await inject(app, '/me', good({}, { host: 'globex.example.com', 'x-forwarded-host': HOST }));
      expect(forged.status).toBe(403);
      expect(forged.body.code).toBe('subdomain_mismatch');
      const harmless = await inject(app, '/me', good({}, { host: HOST, 'x-forwarded-host': 'globex.example.com' }));
      expect(harmless.status).toBe(200);
    });

    it('pathname slug: an unlisted slug is denied, without echoing the allowed slugs', async () => {
      const res = await inject(app, '/api/v1/west/whoami', good());
      expect(res.status).toBe(403);
      expect(res.body).toEqual(forbidden('slug_denied'));
      expect(res.text).not.toContain('north');
    });

    it('pathname slug: a path the pattern does not match has no slug and passes', async () => {
      const res = await inject(app, '/me', good({ pathname_slugs: [] }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ userId: 42, slugs: [] });
      expect((await inject(app, '/api/v1/north/whoami', good({ pathname_slugs: [] }))).body.code).toBe('slug_denied');
    });

    it('pathname slug: percent-encoded slugs and doubled slashes are normalised before the check', async () => {
      expect((await inject(app, '/api/v1/%77est/whoami', good())).body.code).toBe('slug_denied');
      expect((await inject(app, '/api/v1/%6eorth/whoami', good())).status).toBe(200);
    });

    it.each(['/api/v1/north/files/../../west/files/x', '/api/v1/north/files/./x', '/api/v1/north/files/%2e%2e/x'])(
      'pathname slug: %s has dot segments -> 400 invalid_path',
      async (path) => {
        const res = await overSocket(app, path, good());
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'Bad request', status: 400, code: 'invalid_path' });
      },
    );

    it('pathname slug: the same route without dot segments passes over the socket', async () => {
      const res = await overSocket(app, '/api/v1/north/files/x', good());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ url: '/api/v1/north/files/x', userId: 42 });
    });

    it('tenant header: missing -> 403, wrong -> 403, trimmed match and numeric claim pass', async () => {
      const { ['x-org-id']: _, ...withoutHeader } = good();
      const missing = await inject(app, '/me', withoutHeader);
      expect(missing.status).toBe(403);
      expect(missing.body).toEqual(forbidden('tenant_mismatch'));
      const wrong = await inject(app, '/me', good({}, { 'x-org-id': 'globex-co' }));
      expect(wrong.body).toEqual(forbidden('tenant_mismatch'));
      expect(wrong.text).not.toContain('acme-co');
      expect((await inject(app, '/me', good({}, { 'x-org-id': '  acme-co ' }))).status).toBe(200);
      expect((await inject(app, '/me', good({ tenant_id: 7 }, { 'x-org-id': '7' }))).status).toBe(200);
      // The configured header name (from the host's config) is the one read; the default name is not.
      expect((await inject(app, '/me', { ...withoutHeader, 'x-tenant-id': 'acme-co' })).body.code).toBe('tenant_mismatch');
    });

    it('order: a subdomain failure wins over a slug and a tenant-header failure', async () => {
      const res = await inject(app, '/api/v1/west/whoami', good({}, { host: 'globex.example.com', 'x-org-id': 'nope' }));
      expect(res.body).toEqual(forbidden('subdomain_mismatch'));
    });

    it('order: a slug failure wins over a tenant-header failure', async () => {
      const res = await inject(app, '/api/v1/west/whoami', good({}, { 'x-org-id': 'nope' }));
      expect(res.body).toEqual(forbidden('slug_denied'));
    });

    it('order: tenant checks run before the custom validator, which is then not called', async () => {
      const res = await inject(app, '/me', good({ mode: 'reject' }, { 'x-org-id': 'nope' }));
      expect(res.body).toEqual(forbidden('tenant_mismatch'));
      expect(validatorCalls).toEqual([]);
    });
  });

  describe('customPayloadValidator(payload, request)', () => {
    it('false -> 403 custom_validation_failed, and the route does not run', async () => {
      const res = await inject(app, '/boom', good({ mode: 'reject' }));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Access denied', status: 403, code: 'custom_validation_failed' });
      expect(validatorCalls).toHaveLength(1);
    });

    it('undefined -> 403 as well (only true passes)', async () => {
      const res = await inject(app, '/me', good({ mode: 'undefined' }));
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('custom_validation_failed');
    });

    it('Promise<true> -> 200', async () => {
      const res = await inject(app, '/me', good({ mode: 'async' }));
      expect(res.status).toBe(200);
      expect(res.body.userId).toBe(42);
    });

    it('receives the request: a header can make it refuse', async () => {
      const res = await inject(app, '/me', good({}, { 'x-deny': '1' }));
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('custom_validation_failed');
      expect(validatorCalls).toEqual([{ userId: 42, url: '/me' }]);
    });

    it('throws -> 500 with nothing of the error in the response; the error is logged', async () => {
      const before = logs.lines.length;
      const res = await inject(app, '/me', good({ mode: 'throw' }));
      expect(res.status).toBe(500);
      expect(res.text).not.toMatch(/hunter2|exploded|validator/i);
      expect(res.body).toEqual({ statusCode: 500, message: 'Internal Server Error' });
      expect(logs.lines.slice(before).some((line) => line.includes('customPayloadValidator threw'))).toBe(true);
    });
  });
});

// ---------------------------------------------------------------- app B: global: false, guards on one controller only, RBAC

@UseGuards(JwtTenantGuard, RbacGuard)
@Controller('api/v1/:slug/secure')
class SecureController {
  @Get('reports')
  reports(@Req() req: FastifyRequest, @UserId() userId: unknown) {
    return { userId, roles: (req as unknown as Record<symbol, AuthContext>)[AUTH_CONTEXT].roleIds };
  }

  @Post('reports')
  createReport() {
    return { created: true };
  }
}

@Controller('open')
class UnguardedController {
  @Get()
  open(@Req() req: FastifyRequest) {
    return { authenticated: isAuthenticated(req) };
  }
}

@Module({
  imports: [
    AuthModule.forRoot({
      jwtSecret: SECRET,
      global: false,
      rbacEnabled: true,
      rbacCacheStore: 'memory',
      permissionsCacheStore: 'memory',
      payloadMapping: { userId: 'sub', roleIds: 'user_roles' },
    }),
  ],
  controllers: [SecureController, UnguardedController],
})
class GuardedByHandAppModule {}

describe('host app: global: false with @UseGuards(JwtTenantGuard, RbacGuard) on one controller', () => {
  let app: NestFastifyApplication;
  const mapped = (claims: JwtPayload) =>
    sign({ ...claims }, SECRET, { algorithm: 'HS256', expiresIn: 600 });

  beforeAll(async () => {
    app = await boot(GuardedByHandAppModule);
    await app.get(RbacService).setRecord({
      last_update: nowSeconds() - 7200,
      permissions: { editor: ['secure/reports:get'], viewer: ['secure/other:get'] },
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('leaves the other controller public', async () => {
    const res = await inject(app, '/open');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ authenticated: false });
  });

  it('guards the decorated controller', async () => {
    const res = await inject(app, '/api/v1/acme/secure/reports', { host: HOST });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('missing_token');
  });

  it('maps user_id -> sub and role_ids -> user_roles', async () => {
    const res = await inject(app, '/api/v1/acme/secure/reports', bearer(mapped({ sub: 'u-42', user_roles: ['editor'] })));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ userId: 'u-42', roles: ['editor'] });
  });

  it('reads the mapped role claim before the legacy roles claim', async () => {
    // Unmapped, `roles: ["editor"]` would be used (role_ids is absent) and grant the request.
    const res = await inject(app, '/api/v1/acme/secure/reports', bearer(mapped({ sub: 'u-43', user_roles: ['viewer'], roles: ['editor'] })));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Access denied', status: 403, code: 'rbac_denied' });
  });

  it('needs the mapped user claim: user_id alone is not enough', async () => {
    const res = await inject(app, '/api/v1/acme/secure/reports', bearer(mapped({ user_id: 42, user_roles: ['editor'] })));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_claims');
  });

  it('publishes its decisions to a host that subscribes to its channels (the app has no metrics module)', async () => {
    const decisions: AuthDecisionEvent[] = [];
    const cache: PermissionCacheEvent[] = [];
    const onDecision = (message: unknown) => decisions.push(message as AuthDecisionEvent);
    const onCache = (message: unknown) => cache.push(message as PermissionCacheEvent);
    subscribe(AUTH_DECISION_CHANNEL, onDecision);
    subscribe(PERMISSION_CACHE_CHANNEL, onCache);
    try {
      const token = bearer(mapped({ sub: 'u-77', user_roles: ['editor'] }));
      expect((await inject(app, '/api/v1/acme/secure/reports')).status).toBe(401);
      expect((await inject(app, '/api/v1/acme/secure/reports', token)).status).toBe(200);
      expect((await inject(app, '/api/v1/acme/secure/reports', token)).status).toBe(200);
      expect((await inject(app, '/open')).status).toBe(200);
    } finally {
      unsubscribe(AUTH_DECISION_CHANNEL, onDecision);
      unsubscribe(PERMISSION_CACHE_CHANNEL, onCache);
    }
    const allowed = (guard: 'jwt' | 'rbac') => ({ guard, outcome: 'allowed', status: 200, code: 'allowed' });
    expect(decisions).toEqual([
      { guard: 'jwt', outcome: 'denied', status: 401, code: 'missing_token' },
      allowed('jwt'),
      allowed('rbac'),
      allowed('jwt'),
      allowed('rbac'),
    ]);
    // The first grant is evaluated from the record, the second answered from the permission cache.
    expect(cache).toEqual([{ hit: false }, { hit: true }]);
  });

  it('authorizes by method through RbacGuard', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/acme/secure/reports',
      headers: bearer(mapped({ sub: 'u-42', user_roles: 'editor' })),
    });
    expect(res.statusCode).toBe(403);
    expect(JSON.parse(res.body).code).toBe('rbac_denied');
  });
});

// ---------------------------------------------------------------- app C: custom bodies and debug mode

@Module({
  imports: [
    AuthModule.forRoot({
      jwtSecret: SECRET,
      debugMode: true,
      validateSubdomain: true,
      unauthorizedResponse: { message: 'Please sign in', type: 'auth' },
      forbiddenResponse: { message: 'Not yours' },
    }),
  ],
  controllers: [TenantController],
})
class DebugAppModule {}

describe('host app: custom response bodies with debugMode', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await boot(DebugAppModule);
  });
  afterAll(async () => {
    await app.close();
  });

  it('401: the configured body plus code and detail', async () => {
    const res = await inject(app, '/me', { host: HOST });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Please sign in', type: 'auth', code: 'missing_token', detail: expect.any(String) });
    expect(res.body.detail.length).toBeGreaterThan(0);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('401 for a presented token: error="invalid_token", and the token is never logged', async () => {
    const expired = token({ exp: nowSeconds() - 30 });
    const before = logs.lines.length;
    const res = await inject(app, '/me', { host: HOST, ...bearer(expired) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Please sign in', type: 'auth', code: 'token_expired', detail: expect.stringContaining('expired') });
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    const written = logs.lines.slice(before);
    expect(written.some((line) => line.includes('token_expired'))).toBe(true);
    expect(written.join('\n')).not.toContain(expired);
    expect(written.join('\n')).not.toContain(expired.split('.')[2]);
  });

  it('403: the configured body plus code and a detail that does not echo the claim', async () => {
    const res = await inject(app, '/me', { host: 'globex.example.com', ...bearer(token()) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'Not yours', code: 'subdomain_mismatch', detail: expect.any(String) });
    expect(res.body.detail).not.toContain('acme');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('a valid request still reaches the route', async () => {
    const res = await inject(app, '/me', { host: HOST, ...bearer(token()) });
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe(42);
  });
});

// ---------------------------------------------------------------- app D: responseCodes: false

@Module({
  imports: [
    AuthModule.forRoot({
      jwtSecret: SECRET,
      responseCodes: false,
      debugMode: false,
      validateSubdomain: true,
      unauthorizedResponse: { error: 'nope' },
      forbiddenResponse: { denied: true, status: 403 },
    }),
  ],
  controllers: [TenantController],
})
class VerbatimAppModule {}

describe('host app: responseCodes: false sends the configured bodies verbatim', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await boot(VerbatimAppModule);
  });
  afterAll(async () => {
    await app.close();
  });

  it('401 body is exactly the configured one; the headers stay', async () => {
    const res = await inject(app, '/me', { host: HOST, ...bearer('a.b.c') });
    expect(res.status).toBe(401);
    expect(res.text).toBe('{"error":"nope"}');
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('403 body is exactly the configured one', async () => {
    const res = await inject(app, '/me', { host: 'globex.example.com', ...bearer(token()) });
    expect(res.status).toBe(403);
    expect(res.text).toBe('{"denied":true,"status":403}');
  });
});

// ---------------------------------------------------------------- app E: trustProxy, token cookie, skipPreflight: false, real port

@Module({
  imports: [
    AuthModule.forRoot({
      jwtSecret: SECRET,
      trustProxy: true,
      validateSubdomain: true,
      tokenCookieName: 'tg_session',
      skipPreflight: false,
    }),
  ],
  controllers: [TenantController],
})
class ProxiedAppModule {}

describe('host app behind a trusted proxy, with a token cookie, over a real port', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await boot(ProxiedAppModule, true);
  });
  afterAll(async () => {
    await app.close();
  });

  it('uses X-Forwarded-Host for the subdomain when trustProxy is on', async () => {
    const viaProxy = await overSocket(app, '/me', { host: 'internal:3000', 'x-forwarded-host': HOST, ...bearer(token()) });
    expect(viaProxy.status).toBe(200);
    expect(viaProxy.body.userId).toBe(42);
    const otherTenant = await overSocket(app, '/me', { host: HOST, 'x-forwarded-host': 'globex.example.com, acme.example.com', ...bearer(token()) });
    expect(otherTenant.status).toBe(403);
    expect(otherTenant.body.code).toBe('subdomain_mismatch');
  });

  it('reads the token from the configured cookie when there is no Authorization header', async () => {
    const res = await overSocket(app, '/api/v1/north/whoami', { host: HOST, cookie: `theme=dark; tg_session=${token()}; other=1` });
    expect(res.status).toBe(200);
    expect(res.body.decorators.userId).toBe(42);
    expect(res.body.accessors.authenticated).toBe(true);
  });

  it('a bad cookie token is a presented token; another cookie name is no token', async () => {
    const bad = await overSocket(app, '/me', { host: HOST, cookie: `tg_session=${token({ exp: nowSeconds() - 5 })}` });
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe('token_expired');
    expect(bad.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    const otherName = await overSocket(app, '/me', { host: HOST, cookie: `session=${token()}` });
    expect(otherName.status).toBe(401);
    expect(otherName.body.code).toBe('missing_token');
  });

  it('the Authorization header wins over the cookie', async () => {
    const res = await overSocket(app, '/me', { host: HOST, authorization: 'Bearer a.b.c', cookie: `tg_session=${token()}` });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('malformed_token');
  });

  it('with skipPreflight: false, OPTIONS needs a token like any other method', async () => {
    const res = await overSocket(app, '/api/v1/north/whoami', { host: HOST }, 'OPTIONS');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('missing_token');
    const authorized = await overSocket(app, '/api/v1/north/whoami', { host: HOST, ...bearer(token()) }, 'OPTIONS');
    expect(authorized.status).toBe(200);
    expect(authorized.body).toEqual({ preflight: true });
  });
});

// ---------------------------------------------------------------- module start failures

describe('host app: AuthModule refuses to start with bad options', () => {
  it('forRoot names both a bad algorithm and a weak secret in one message, without the secret', async () => {
    const weak = 'sh0rt!';
    const compiling = Test.createTestingModule({
      imports: [AuthModule.forRoot({ jwtSecret: weak, jwtAlgorithm: 'HS257' as any })],
    })
      .setLogger(logs)
      .compile();
    const error: unknown = await compiling.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(AuthOptionsError);
    const message = (error as Error).message;
    expect(message).toMatch(/jwtAlgorithm must be one of .*\(got "HS257"\)/);
    expect(message).toMatch(/jwtSecret is 6 bytes/);
    expect(message).not.toContain(weak);
  });

  it.each([
    ['routerOptions.useSemicolonDelimiter', { routerOptions: { useSemicolonDelimiter: true } }, /useSemicolonDelimiter: true/],
    ['routerOptions.caseSensitive', { routerOptions: { caseSensitive: false } }, /caseSensitive: false/],
    ['the top-level caseSensitive', { caseSensitive: false }, /caseSensitive: false/],
  ])('refuses a Fastify router set with %s while the slug check or RBAC decides on paths', async (_, adapterOptions, named) => {
    @Module({ imports: [AuthModule.forRoot({ jwtSecret: SECRET, validatePathnameSlug: true })] })
    class SlugCheckedModule {}
    const moduleRef = await Test.createTestingModule({ imports: [SlugCheckedModule] }).setLogger(logs).compile();
    const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(adapterOptions as object), { logger: logs });
    await expect(app.init()).rejects.toThrow(named);
    await app.close();
  });

  it('starts on such a router when no check reads the path', async () => {
    @Module({ imports: [AuthModule.forRoot({ jwtSecret: SECRET })] })
    class TokenOnlyModule {}
    const moduleRef = await Test.createTestingModule({ imports: [TokenOnlyModule] }).setLogger(logs).compile();
    const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter({ routerOptions: { caseSensitive: false } }), {
      logger: logs,
    });
    await expect(app.init()).resolves.toBe(app);
    await app.close();
  });

  it('forRootAsync validates what the host factory returned', async () => {
    @Injectable()
    class EmptyConfig {
      get(): string | undefined {
        return undefined;
      }
    }
    @Module({ providers: [EmptyConfig], exports: [EmptyConfig] })
    class EmptyConfigModule {}

    const compiling = Test.createTestingModule({
      imports: [
        AuthModule.forRootAsync({
          imports: [EmptyConfigModule],
          inject: [EmptyConfig],
          useFactory: (config: EmptyConfig) => ({ jwtSecret: config.get()!, rbacCacheStore: 'redis', skipPaths: ['nope'] }),
        }),
      ],
    })
      .setLogger(logs)
      .compile();
    await expect(compiling).rejects.toThrow(AuthOptionsError);
    await expect(compiling).rejects.toThrow(/jwtSecret is required.*skipPaths\[0\].*rbacCacheStoreOptions\.url is required/);
  });
});
