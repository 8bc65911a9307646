/**
 * AiModule's agent in another Nest app on Fastify: the host registers a generic tool, a context hook (no
 * AuthModule), a veto and a telemetry hook through AiModule.forRoot, and POST /v1/agent runs them against
 * a scripted OpenAI-wire emulator; interleaved requests each see their own principal.
 */
import { Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AiModule } from '../src/ai/ai.module';
import type { AgentTelemetryEvent } from '../src/ai/agent/agent-telemetry';
import type { AgentTool } from '../src/ai/agent/agent-tool.interface';
import { actionBlock, observationsIn, ScriptedChatEmulator } from './emulators/scripted-chat-emulator';

let chat: ScriptedChatEmulator;
let app: NestFastifyApplication;
const events: AgentTelemetryEvent[] = [];
const seen: Array<{ principal?: string; tenantId?: string; requestId: string }> = [];

const lookup: AgentTool = {
  name: 'account_lookup',
  description: 'Returns the account of the caller.',
  parameters: { type: 'object', properties: { field: { enum: ['plan', 'owner'] } }, required: ['field'], additionalProperties: false },
  call: async ({ args, context }) => {
    seen.push({ principal: context.principal, tenantId: context.tenantId, requestId: context.requestId });
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 15));
    return { field: args.field, owner: context.principal, tenant: context.tenantId };
  },
};

beforeAll(async () => {
  chat = await ScriptedChatEmulator.start();
  const providers = [{ name: 'scripted', kind: 'openai_compatible' as const, url: chat.url, chatModel: 'agent-model', timeoutMs: 2000 }];
  @Module({
    imports: [
      AiModule.forRoot({
        providers,
        retryAttempts: 0,
        api: { auth: 'none' },
        agent: {
          limits: { maxLoops: 3 },
          toolProtocol: 'prompt',
          tools: [lookup],
          contextHook: (request) => ({ principal: request.headers['x-user'] as string | undefined, tenantId: request.headers['x-org'] as string | undefined }),
          authorize: ({ context }) => context.tenantId !== 'blocked-org',
          telemetry: [(event) => void events.push(event)],
        },
      }),
    ],
  })
  class HostModule {}
  app = await NestFactory.create<NestFastifyApplication>(HostModule as Type, new FastifyAdapter(), { logger: false });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
});

afterAll(async () => {
  await app.close();
  await chat.close();
});

const post = (headers: Record<string, string>, body: unknown) =>
  app.inject({ method: 'POST', url: '/v1/agent', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });

describe('the agent in a host app', () => {
  it("runs the host's tool with the principal and tenant from the host's hook, per request", async () => {
    chat.script = ({ user }) => {
      const [observation] = observationsIn(user);
      return observation ? JSON.stringify(observation) : actionBlock('account_lookup', { field: 'owner' });
    };
    const users = Array.from({ length: 16 }, (_, i) => ({ 'x-user': `user-${i}`, 'x-org': `org-${i % 4}` }));
    const responses = await Promise.all(users.map((headers) => post(headers, { prompt: 'whose account?', tools: ['account_lookup'] })));
    responses.forEach((response, i) => {
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.json().response)).toEqual({ tool: 'account_lookup', ok: true, result: { field: 'owner', owner: `user-${i}`, tenant: `org-${i % 4}` } });
    });
    expect(seen).toHaveLength(16);
    // Each tool call saw exactly one request's principal and tenant, and its own request id.
    for (const call of seen) {
      const index = Number(/^user-(\d+)$/.exec(call.principal!)![1]);
      expect(call.tenantId).toBe(`org-${index % 4}`);
    }
    expect(new Set(seen.map((call) => call.principal)).size).toBe(16);
    expect(new Set(seen.map((call) => call.requestId)).size).toBe(16);
  });

  it("applies the host's veto and reports it in telemetry", async () => {
    events.length = 0;
    seen.length = 0;
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('account_lookup', { field: 'plan' }) : 'no access');
    const response = await post({ 'x-user': 'eve', 'x-org': 'blocked-org' }, { prompt: 'plan?', tools: ['account_lookup'] });
    expect(response.json()).toMatchObject({ response: 'no access', actions: [{ tool: 'account_lookup', outcome: 'vetoed', error: 'forbidden' }] });
    expect(seen).toEqual([]);
    expect(events.find((e) => e.event === 'agent.tool_call')).toMatchObject({ tool: 'account_lookup', outcome: 'vetoed', category: 'forbidden', principal: 'eve', tenantId: 'blocked-org' });
  });

  it('refuses tool arguments that do not match the JSON Schema without calling the tool', async () => {
    seen.length = 0;
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('account_lookup', { field: 'password' }) : JSON.stringify(observationsIn(user)[0]));
    const response = await post({ 'x-user': 'u', 'x-org': 'o' }, { prompt: 'x', tools: ['account_lookup'] });
    expect(JSON.parse(response.json().response)).toEqual({ tool: 'account_lookup', ok: false, error: 'invalid_arguments' });
    expect(seen).toEqual([]);
  });
});
