/**
 * Runs the compiled adapter of one registration in a process of its own and prints what each call gave:
 * `{"text","model"}` or `{"error","message"}`, one JSON line per call. For credentials that reach their token
 * service through gaxios, which loads its fetch by dynamic import(), something Jest's module VM cannot run; and
 * for credential chains read from the environment, which a child process gets clean.
 * argv: the ProviderSettings as JSON, the number of generate calls.
 */
const { join } = require('node:path');
const { createProvider } = require(join(__dirname, '..', '..', 'dist', 'src', 'ai', 'providers', 'provider-factory.js'));

async function main() {
  const [settings, calls] = [JSON.parse(process.argv[2]), Number(process.argv[3])];
  const provider = createProvider(settings);
  try {
    for (let i = 0; i < calls; i++) {
      try {
        const result = await provider.generate({ messages: [{ role: 'user', content: 'Hi' }] });
        process.stdout.write(`${JSON.stringify({ text: result.text, model: result.model })}\n`);
      } catch (error) {
        process.stdout.write(`${JSON.stringify({ error: error.constructor.name, message: error.message })}\n`);
      }
    }
  } finally {
    await provider.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
