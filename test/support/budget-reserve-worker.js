/**
 * One process of the budget engine's cross-process test: connects the compiled engine to Redis, prints
 * "ready", waits for a line on stdin (so both processes start together), fires CALLS concurrent reserve calls
 * for one key scope, then prints {"granted":n,"refused":n,"other":[...],"immediate":n} and exits. With LOOPS,
 * it runs that many loops instead, each reserving one call after the other until it is refused; `immediate`
 * counts the reserves answered at once (from a lease).
 * argv: redis URL, key prefix, key id, budget micros, estimate micros, calls [, loops].
 */
const { join } = require('node:path');
const dist = join(__dirname, '..', '..', 'dist', 'src', 'governance', 'budgets');
const { createBudgetEngine } = require(join(dist, 'budget-engine.factory.js'));
const { BudgetExceededError } = require(join(dist, 'budget-errors.js'));

const [url, keyPrefix, keyId, budget, estimate, calls, loops] = process.argv.slice(2);

async function main() {
  const engine = await createBudgetEngine({ kind: 'redis', url, keyPrefix });
  const scope = { kind: 'key', id: keyId, period: 'day', limit: { micros: Number(budget) } };
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.destroy();
  const outcome = (reserved) =>
    Promise.resolve(reserved).then(
      () => 'granted',
      (error) => (error instanceof BudgetExceededError ? 'refused' : `${error.name}: ${error.message}`),
    );
  const reserve = () => engine.reserve([scope], { micros: Number(estimate), tokens: 1 });
  let immediate = 0;
  const loop = async () => {
    const made = [];
    for (;;) {
      const reserved = reserve();
      if (!(reserved instanceof Promise)) immediate += 1;
      made.push(await outcome(reserved));
      if (made[made.length - 1] !== 'granted') return made;
    }
  };
  const outcomes = loops
    ? (await Promise.all(Array.from({ length: Number(loops) }, loop))).flat()
    : await Promise.all(Array.from({ length: Number(calls) }, () => outcome(reserve())));
  await engine.close();
  const count = (what) => outcomes.filter((outcome) => outcome === what).length;
  process.stdout.write(`${JSON.stringify({ granted: count('granted'), refused: count('refused'), other: outcomes.filter((o) => o !== 'granted' && o !== 'refused'), immediate })}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.name}: ${error.message}\n`);
  process.exit(1);
});
