/**
 * `npm run demo` (node dist/src/demo/main.js) as a subprocess on a free port: the curl command it prints is run
 * as printed, and the `openai` npm client talks to it as its snippet says; every answer is labelled [demo].
 */
import { spawnSync } from 'node:child_process';
import OpenAI from 'openai';
import { type DemoProcess, startDemo } from './support/demo-process';

let demo: DemoProcess;
let output: string;
let origin: string;

beforeAll(async () => {
  // The caller's provider keys and API token must not change the demo.
  demo = await startDemo({ API_TOKEN: 'not-the-demo-token', OPENAI_API_KEY: 'sk-ignored' });
  ({ output, origin } = demo);
}, 120_000);

afterAll(() => demo.stop());

describe('npm run demo', () => {
  it('prints the curl command of the brief for its port, and that command gets a labelled answer', () => {
    const curl = output.split('\n').find((line) => line.startsWith('curl '));
    expect(curl).toBe(
      `curl -s ${origin}/openai/v1/chat/completions -H 'Authorization: Bearer demo-token' -H 'Content-Type: application/json' ` +
        `-d '{"model":"demo/demo-chat","messages":[{"role":"user","content":"Hello"}]}'`,
    );
    const run = spawnSync('sh', ['-c', curl!], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(0);
    const body = JSON.parse(run.stdout);
    expect(body).toMatchObject({ object: 'chat.completion', model: 'demo/demo-chat' });
    expect(body.choices[0].message.content).toMatch(/^\[demo\] .*You said: Hello$/);
  });

  it('answers the openai npm client as its snippet says: chat, streaming, embeddings and models, all labelled', async () => {
    expect(output).toContain(`new OpenAI({ baseURL: '${origin}/openai/v1', apiKey: 'demo-token' })`);
    const client = new OpenAI({ baseURL: `${origin}/openai/v1`, apiKey: 'demo-token', maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'demo/demo-chat', messages: [{ role: 'user', content: 'Hi there' }] });
    expect(completion.choices[0].message.content).toMatch(/^\[demo\] .*You said: Hi there$/);

    const stream = await client.chat.completions.create({ model: 'demo/demo-chat', messages: [{ role: 'user', content: 'Stream' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toMatch(/^\[demo\] .*You said: Stream$/);

    const embedding = await client.embeddings.create({ model: 'demo/demo-embed', input: ['one', 'one'] });
    expect(embedding.data).toHaveLength(2);
    expect(embedding.data[0].embedding).toHaveLength(8);
    expect(embedding.data[0].embedding).toEqual(embedding.data[1].embedding);

    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['demo/demo-chat', 'demo/demo-embed']);
  });

  it('takes only the demo token, whatever API_TOKEN says', async () => {
    const wrong = new OpenAI({ baseURL: `${origin}/openai/v1`, apiKey: 'not-the-demo-token', maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 });
  });
});
