/**
 * The built-in demo provider: a loopback server speaking the OpenAI wire format (GET /v1/models, POST
 * /v1/chat/completions with and without streaming, POST /v1/embeddings) so Tollgate can be tried without a
 * model. Every answer says it is the demo: chat text starts with DEMO_LABEL, models are owned by
 * `tollgate-demo`. What it answers (tool calls, JSON for a schema, image notes) is decided in demo-answer.ts.
 * Its usage counts 4 characters a token, as a model's would roughly, so a budget in tokens is spent by use.
 * The test emulators (test/emulators/) script faults and quirks; this serves the happy path only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEMO_LABEL, type DemoAnswer, type DemoToolCall, demoAnswer } from './demo-answer';

export const DEMO_CHAT_MODEL = 'demo-chat';
export const DEMO_EMBEDDING_MODEL = 'demo-embed';
const DEMO_DIMENSIONS = 8;
const MAX_BODY_BYTES = 1024 * 1024;

export interface DemoUpstream {
  /** Base URL an openai_compatible provider is configured with (ends in /v1). */
  url: string;
  close(): Promise<void>;
}

export async function startDemoUpstream(): Promise<DemoUpstream> {
  const server = createServer((request, response) => {
    answer(request, response).catch(() => send(response, 500, error('demo provider failure')));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, close: () => closeServer(server) };
}

/** A deterministic vector per text, so equal texts embed equally. */
export function demoEmbedding(text: string): number[] {
  const vector: number[] = [];
  for (let i = 0; i < DEMO_DIMENSIONS; i++) {
    let hash = 17 + i;
    for (const character of text) hash = (hash * 31 + character.charCodeAt(0)) % 10_007;
    vector.push(hash / 10_007);
  }
  return vector;
}

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://demo').pathname;
  if (request.method === 'GET' && path === '/v1/models') {
    const data = [DEMO_CHAT_MODEL, DEMO_EMBEDDING_MODEL].map((id) => ({ id, object: 'model', created: 0, owned_by: 'tollgate-demo' }));
    return send(response, 200, { object: 'list', data });
  }
  if (request.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/embeddings')) {
    return send(response, 404, error(`the demo provider has no ${request.method} ${path}`));
  }
  const body = await readJson(request);
  if (body === undefined) return send(response, 400, error('the body must be a JSON object'));
  return path === '/v1/embeddings' ? embeddings(body, response) : chat(body, response);
}

function chat(body: Record<string, unknown>, response: ServerResponse): void {
  if (body.model !== DEMO_CHAT_MODEL) return send(response, 404, error(`the demo provider serves the chat model ${DEMO_CHAT_MODEL} only`));
  const answer = withinMaxTokens(demoAnswer(body), body.max_completion_tokens ?? body.max_tokens);
  const usage = usageOf(body, answer);
  const base = { id: 'chatcmpl-demo', created: Math.floor(Date.now() / 1000), model: DEMO_CHAT_MODEL };
  const finishReason = answer.kind === 'tool_call' ? 'tool_calls' : answer.cut ? 'length' : 'stop';
  if (body.stream !== true) {
    const message = answer.kind === 'tool_call' ? { role: 'assistant', content: null, tool_calls: [toolCallOf(answer.call)] } : { role: 'assistant', content: answer.text };
    return send(response, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finishReason }], usage });
  }
  const chunk = (choice: object, extra: object = {}) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [choice], ...extra })}\n\n`;
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (answer.kind === 'tool_call') {
    const { id, name, arguments: args } = answer.call;
    response.write(chunk({ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }, finish_reason: null }));
    response.write(chunk({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args } }] }, finish_reason: null }));
  } else {
    response.write(chunk({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }));
    for (const word of answer.text.split(/(?<= )/)) response.write(chunk({ index: 0, delta: { content: word }, finish_reason: null }));
  }
  response.end(chunk({ index: 0, delta: {}, finish_reason: finishReason }, { usage }) + 'data: [DONE]\n\n');
}

/** A text answer cut to `max_tokens` (4 characters a token), as a model stops at its limit. */
function withinMaxTokens(answer: DemoAnswer, maxTokens: unknown): DemoAnswer & { cut?: boolean } {
  if (answer.kind !== 'text' || typeof maxTokens !== 'number' || tokensOf(answer.text) <= maxTokens) return answer;
  return { kind: 'text', text: answer.text.slice(0, maxTokens * 4), cut: true };
}

function toolCallOf(call: DemoToolCall) {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

/** Tokens at 4 characters each: the request's messages and tools in, the answer out. */
function usageOf(body: Record<string, unknown>, answer: DemoAnswer) {
  const prompt_tokens = tokensOf(JSON.stringify(body.messages ?? []) + JSON.stringify(body.tools ?? []));
  const completion_tokens = tokensOf(answer.kind === 'tool_call' ? answer.call.name + answer.call.arguments : answer.text);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function tokensOf(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function embeddings(body: Record<string, unknown>, response: ServerResponse): void {
  if (body.model !== DEMO_EMBEDDING_MODEL) return send(response, 404, error(`the demo provider serves the embedding model ${DEMO_EMBEDDING_MODEL} only`));
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.some((input) => typeof input !== 'string')) {
    return send(response, 400, error('input must be a string or a non-empty array of strings'));
  }
  const data = (inputs as string[]).map((text, index) => ({ object: 'embedding', index, embedding: demoEmbedding(text) }));
  send(response, 200, { object: 'list', data, model: DEMO_EMBEDDING_MODEL, usage: { prompt_tokens: inputs.length, total_tokens: inputs.length } });
}

function error(message: string) {
  return { error: { message: `${DEMO_LABEL} ${message}`, type: 'invalid_request_error', param: null, code: null } };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return void response.end();
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
