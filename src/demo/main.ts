/**
 * `npm run demo`: Tollgate on 127.0.0.1 (port 3000, or PORT) with the built-in demo provider as its only
 * provider and the API token `demo-token`, then a curl command and an `openai` client snippet that work as printed,
 * the base URL of each dialect, and governance without a model of one's own: an API key created at start (memory
 * key store) with a budget of DEMO_KEY_BUDGET_TOKENS tokens a day, a curl loop that spends it to a 429, and the
 * usage page. Nothing else from the environment or config/tollgate.yaml applies: the demo behaves the same on
 * every machine.
 */
import 'reflect-metadata';
import { destination } from 'pino';
import { ConfigError } from '../config/config.error';
import { loadConfig } from '../config/config.loader';
import { checkServerStart } from '../config/server-start-checks';
import { KeysService } from '../governance/keys/keys.service';
import { restFieldLabel } from '../governance/keys/api-key-record';
import { USAGE_PAGE_PATH } from '../governance/ledger/usage-page';
import { startHttpServer } from '../server/http-server';
import { DEMO_CHAT_MODEL, DEMO_EMBEDDING_MODEL, startDemoUpstream } from './demo-upstream';

const DEMO_TOKEN = 'demo-token';
const DEMO_PROVIDER = 'demo';
/** Three `Hello`s through the demo fit (about 32 tokens each, answer included), the fourth is refused. */
const DEMO_KEY_BUDGET_TOKENS = 100;
const DEMO_KEY_TENANT = 'demo';

async function runDemo(): Promise<void> {
  const upstream = await startDemoUpstream();
  const document = {
    version: 1,
    server: { host: '127.0.0.1' },
    providers: {
      [DEMO_PROVIDER]: { kind: 'openai_compatible', url: upstream.url, chat_model: DEMO_CHAT_MODEL, embedding_model: DEMO_EMBEDDING_MODEL },
    },
    api: { auth: 'token', token: DEMO_TOKEN },
  };
  const config = loadConfig({ document: { label: 'demo configuration (npm run demo)', value: document }, env: { PORT: process.env.PORT } });
  await checkServerStart(config, {});
  // Logs written as they come (not buffered), so the instructions printed next follow the start-up lines
  // instead of landing among them.
  const app = await startHttpServer(config, { destination: destination({ dest: 1, sync: true }) });
  const { key } = await app
    .get(KeysService)
    .create({ name: 'demo key', tenant: DEMO_KEY_TENANT, budgetTokens: DEMO_KEY_BUDGET_TOKENS, period: 'day' }, restFieldLabel);
  process.stdout.write(instructions(await app.getUrl(), key));
}

/** What to paste: the same request as curl and with the `openai` npm client, each dialect's base URL, and the budget. */
function instructions(origin: string, demoKey: string): string {
  const body = JSON.stringify({ model: `${DEMO_PROVIDER}/${DEMO_CHAT_MODEL}`, messages: [{ role: 'user', content: 'Hello' }] });
  return `
Tollgate demo on ${origin}: the provider "${DEMO_PROVIDER}" is built in and labels every answer [demo]; it is not a language model.
API token: ${DEMO_TOKEN}. Models: ${DEMO_PROVIDER}/${DEMO_CHAT_MODEL} (chat), ${DEMO_PROVIDER}/${DEMO_EMBEDDING_MODEL} (embeddings). Stop with Ctrl+C.

Try it with curl:
curl -s ${origin}/openai/v1/chat/completions -H 'Authorization: Bearer ${DEMO_TOKEN}' -H 'Content-Type: application/json' -d '${body}'

Or with the openai npm client (npm install openai; save as demo.mjs, run node demo.mjs):
import OpenAI from 'openai';
const client = new OpenAI({ baseURL: '${origin}/openai/v1', apiKey: '${DEMO_TOKEN}' });
const completion = await client.chat.completions.create({ model: '${DEMO_PROVIDER}/${DEMO_CHAT_MODEL}', messages: [{ role: 'user', content: 'Hello' }] });
console.log(completion.choices[0].message.content);

The demo provider calls a tool you force with tool_choice or name in your prompt ("use get_weather"), answers JSON
that fits a response_format json_schema, and tells an image's type and size. Every dialect reaches it:
OpenAI Chat Completions and Responses: ${origin}/openai/v1   Anthropic Messages: ${origin}/anthropic
Gemini: ${origin}/gemini   Tollgate's own API: ${origin}/v1

Governance: the API key ${demoKey} (tenant ${DEMO_KEY_TENANT}) may spend ${DEMO_KEY_BUDGET_TOKENS} tokens a day. Spend it; the fourth call is refused with 429 budget_exceeded:
for i in 1 2 3 4; do curl -s -o /dev/null -w '%{http_code}\\n' ${origin}/openai/v1/chat/completions -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' -d '${body}'; done
What it spent: ${origin}${USAGE_PAGE_PATH} (paste the key).

API docs: ${origin}/docs
`;
}

runDemo().catch((error: unknown) => {
  const lines = error instanceof ConfigError ? error.problems : [(error as Error)?.message ?? String(error)];
  for (const line of lines) process.stderr.write(`tollgate demo: ${line}\n`);
  process.exit(1);
});
