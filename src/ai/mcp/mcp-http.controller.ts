/**
 * Streamable HTTP for MCP (docs/search-agent-mcp.md; docs/decisions.md B7), on the SDK's transport. Tollgate
 * owns the session layer so its state can live in a shared store: each request gets a fresh SDK server
 * and a stateless transport, and this endpoint checks, in order: Origin allow-list (403), bearer token or
 * AuthModule's context (401), body size (413), session id (400 when missing, 404 when unknown, expired or
 * opened by another principal), protocol version against the session (400). Notifications are answered 202
 * and requests with a one-shot SSE stream by the SDK; GET has no standalone stream (405); DELETE ends a session.
 */
import { randomUUID } from 'node:crypto';
import { Delete, Get, Inject, Optional, Post, Req, Res, type Type, Controller } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { getAuthContext } from '../../auth/request-context';
import { packageVersion } from '../../common/packaged-files';
import { AgentService } from '../agent/agent.service';
import { AiClient } from '../client/ai-client';
import { API_CALLER_RESOLVER, API_KEY_PREFIX, type ApiCallerResolver, bearerOf, bearerTokenMatches } from '../../http/api-auth.guard';
import { API_TOKEN_STATE, setGovernance } from '../../governance/governance-state';
import { requestCallContext, runWithCallContext } from '../../governance/call-context';
import { governanceOf } from '../../governance/governance-identity';
import { TollgateError } from '../errors';
import { SearchService } from '../tools/search.service';
import type { McpSettings } from './mcp-settings';
import { jsonRpcErrorBody, MCP_ROUTE_CONFIG } from './mcp-json-rpc-error';
import { MCP_SESSION_STORE, type McpSession, type McpSessionStore } from './mcp-session-store.interface';
import { createMcpServer } from './mcp-tools';
import { ApiSecurity } from '@nestjs/swagger';
import { JWT_SCHEME, MCP_TOKEN_SCHEME } from '../../observability/openapi';

export const MCP_SETTINGS = Symbol('tollgate:mcp-settings');

interface Identity {
  principal: string;
  tenantId?: string;
}

class Refusal {
  constructor(
    readonly status: number,
    readonly message: string,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** Documented with mcp.token or the JWT, whichever mcp.auth names. */
@ApiSecurity(MCP_TOKEN_SCHEME)
@ApiSecurity(JWT_SCHEME)
export class McpHttpEndpoint {
  constructor(
    @Inject(MCP_SETTINGS) private readonly settings: McpSettings,
    @Inject(MCP_SESSION_STORE) private readonly sessions: McpSessionStore,
    @Inject(AiClient) private readonly client: AiClient,
    @Inject(SearchService) private readonly search: SearchService,
    @Inject(AgentService) private readonly agent: AgentService,
    @Optional() @Inject(API_CALLER_RESOLVER) private readonly callers?: ApiCallerResolver,
  ) {}

  @Post()
  @RouteConfig(MCP_ROUTE_CONFIG)
  async post(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.guarded(request, reply, async (identity) => {
      this.checkSize(request);
      const messages = (Array.isArray(request.body) ? request.body : [request.body]) as Array<{ method?: unknown; params?: { protocolVersion?: unknown } }>;
      const initialize = messages.find((message) => message?.method === 'initialize');
      const sessionId = header(request, 'mcp-session-id');
      let session: McpSession;
      if (initialize) {
        if (sessionId !== undefined) throw new Refusal(400, 'initialize must not carry an Mcp-Session-Id header');
        if (messages.length > 1) throw new Refusal(400, 'initialize must be sent alone');
        if (!acceptsBoth(request)) return this.delegate(request, reply, identity);
        session = await this.open(identity, initialize.params?.protocolVersion);
        reply.raw.setHeader('mcp-session-id', session.id);
      } else {
        session = await this.resume(request, identity, sessionId);
      }
      await this.delegate(request, reply, { principal: session.principal, tenantId: session.tenantId });
    });
  }

  /** No standalone SSE stream: the server sends nothing unprompted (the transport spec allows 405). */
  @Get()
  @RouteConfig(MCP_ROUTE_CONFIG)
  async get(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.guarded(request, reply, async () => {
      throw new Refusal(405, 'GET is not offered; POST requests and DELETE to end a session', { allow: 'POST, DELETE' });
    });
  }

  @Delete()
  @RouteConfig(MCP_ROUTE_CONFIG)
  async end(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.guarded(request, reply, async (identity) => {
      const session = await this.resume(request, identity, header(request, 'mcp-session-id'));
      await this.sessions.delete(session.id);
      reply.raw.writeHead(200).end();
    });
  }

  /** Origin, then identity; refusals become JSON-RPC error bodies with their HTTP status. */
  private async guarded(request: FastifyRequest, reply: FastifyReply, handle: (identity: Identity) => Promise<void>): Promise<void> {
    reply.hijack();
    reply.raw.setHeader('x-request-id', String(request.id));
    try {
      this.checkOrigin(request);
      const identity = await this.identify(request);
      const state = governanceOf(request);
      // The handler runs after the identity is known, so its model calls are recorded and gated for the caller.
      await (state ? runWithCallContext(requestCallContext(request, state), () => handle(identity)) : handle(identity));
    } catch (error) {
      const refusal = error instanceof Refusal ? error : new Refusal(503, 'MCP sessions are unavailable');
      if (reply.raw.headersSent) {
        reply.raw.destroy();
        return;
      }
      reply.raw.writeHead(refusal.status, { 'content-type': 'application/json', ...refusal.headers });
      reply.raw.end(JSON.stringify(jsonRpcErrorBody(refusal.message)));
    }
  }

  private checkOrigin(request: FastifyRequest): void {
    const origin = header(request, 'origin');
    if (origin !== undefined && !this.settings.allowedOrigins.includes(origin.toLowerCase())) {
      throw new Refusal(403, 'Origin not allowed');
    }
  }

  /** Also leaves the caller's GovernanceRequestState on the request, like ApiAuthGuard does on /v1. */
  private async identify(request: FastifyRequest): Promise<Identity> {
    switch (this.settings.auth) {
      case 'none':
        return { principal: 'anonymous' };
      case 'jwt': {
        // AuthModule's global guard verified the token before this handler ran.
        const context = getAuthContext(request);
        if (!context) throw new Refusal(401, 'Authentication required', { 'www-authenticate': 'Bearer' });
        const state = this.callers?.fromAuthContext(request);
        if (state) setGovernance(request, state);
        return { principal: String(context.userId), ...(context.tenantId !== undefined ? { tenantId: String(context.tenantId) } : {}) };
      }
      default: {
        const key = bearerOf(request.headers.authorization);
        if (this.callers && key?.startsWith(API_KEY_PREFIX)) return this.identifyKey(this.callers, key, request);
        if (!bearerTokenMatches(request.headers.authorization, this.settings.token)) {
          throw new Refusal(401, 'A valid bearer token is required', { 'www-authenticate': 'Bearer' });
        }
        setGovernance(request, API_TOKEN_STATE);
        return { principal: 'token' };
      }
    }
  }

  /** An API key: its sessions belong to the key (another key, or the shared token, cannot resume them). */
  private async identifyKey(callers: ApiCallerResolver, key: string, request: FastifyRequest): Promise<Identity> {
    try {
      const state = await callers.authenticateKey(key);
      setGovernance(request, state);
      const { subject, tenant } = state.identity;
      return { principal: `key:${subject}`, ...(tenant !== null ? { tenantId: tenant } : {}) };
    } catch (error) {
      if (error instanceof TollgateError && error.type === 'invalid_key') {
        throw new Refusal(401, 'A valid bearer token is required', { 'www-authenticate': 'Bearer' });
      }
      throw new Refusal(503, 'The API key store is unavailable');
    }
  }

  private checkSize(request: FastifyRequest): void {
    const declared = Number(request.headers['content-length']);
    const size = Number.isFinite(declared) ? declared : Buffer.byteLength(JSON.stringify(request.body ?? null));
    if (size > this.settings.maxBodyBytes) throw new Refusal(413, `request body exceeds ${this.settings.maxBodyBytes} bytes`);
  }

  private async open(identity: Identity, requested: unknown): Promise<McpSession> {
    const protocolVersion = typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    const session: McpSession = { id: randomUUID(), principal: identity.principal, protocolVersion, createdAt: Date.now(), ...(identity.tenantId !== undefined ? { tenantId: identity.tenantId } : {}) };
    await this.sessions.create(session, this.settings.sessionTtlMs);
    return session;
  }

  /** The caller's own live session; another principal's session is as unknown as a missing one. */
  private async resume(request: FastifyRequest, identity: Identity, sessionId: string | undefined): Promise<McpSession> {
    if (sessionId === undefined) throw new Refusal(400, 'Mcp-Session-Id header is required');
    const session = /^[0-9a-f-]{36}$/.test(sessionId) ? await this.sessions.touch(sessionId, this.settings.sessionTtlMs) : undefined;
    if (!session || session.principal !== identity.principal || session.tenantId !== identity.tenantId) throw new Refusal(404, 'Session not found');
    const version = header(request, 'mcp-protocol-version');
    if (version !== undefined && version !== session.protocolVersion) {
      throw new Refusal(400, `MCP-Protocol-Version ${version.slice(0, 32)} does not match the session's ${session.protocolVersion}`);
    }
    return session;
  }

  /** One SDK server and stateless transport for this request, closed with the response. */
  private async delegate(request: FastifyRequest, reply: FastifyReply, identity: Identity): Promise<void> {
    const requestId = String(request.id);
    const server = createMcpServer({ client: this.client, search: this.search, agent: this.agent, version: packageVersion() }, () => ({ requestId, ...identity }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function acceptsBoth(request: FastifyRequest): boolean {
  const accept = header(request, 'accept') ?? '';
  return accept.includes('application/json') && accept.includes('text/event-stream');
}

/** The endpoint as a controller on the configured path (a class per module, so two apps may differ). */
export function mcpControllerFor(path: string): Type {
  class McpEndpoint extends McpHttpEndpoint {}
  Controller(path)(McpEndpoint);
  return McpEndpoint;
}
