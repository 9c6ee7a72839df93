/**
 * The soak run itself (scripts/soak.ts starts it under the right Node): install the simulated clock
 * first, so that everything loaded after it (the plugin, the simulated services, the relay) takes its
 * timers from it, then play the week, print the summary, write the results, and fail on a broken rule.
 */
import { randomInt } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SimulatedTime } from './simulated-time.js';
import { FULL_WEEK, OUTAGES_PER_WEEK, planWeek, QUICK_WEEK } from './week-plan.js';

const USAGE = 'npm run soak -- [--quick] [--seed N] [--out FILE]';


export async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: { quick: { type: 'boolean', default: false }, seed: { type: 'string' }, out: { type: 'string', default: 'soak-results.json' } },
  });
  const seed = values.seed === undefined ? randomInt(2 ** 31) : Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    console.error(`--seed takes a whole number. ${USAGE}`);
    return 2;
  }
  const started = performance.now();
  const shape = values.quick ? QUICK_WEEK : FULL_WEEK;
  console.log(`Soak: ${shape.days} simulated days with seed ${seed}...`);

  // Source maps are read the first time an error's stack is formatted, and kept: a week of network
  // errors would show up as heap growth of the soak's own making.
  process.setSourceMapsEnabled(false);
  const time = await SimulatedTime.install(Date.now());
  let outcome;
  try {
    const { runWeek } = await import('./week.js');
    const { DOORBELLS } = await import('../lib/platform-harness.js');
    const plan = planWeek({ ...shape, doorbells: DOORBELLS.length }, seed);
    outcome = { plan, report: await runWeek(plan, time) };
  } finally {
    time.uninstall();
  }
  const { plan, report } = outcome;
  const { summary } = await import('./summary.js');
  const { violations } = await import('./results.js');
  const results = { ...report.results, wallSeconds: Math.round((performance.now() - started) / 100) / 10 };
  const broken = [...violations(results, { minOutages: OUTAGES_PER_WEEK, refreshes: plan.refreshes, homebridgeRestarts: plan.homebridgeRestarts.length }), ...report.failures];
  console.log(summary(plan, report, results, broken));
  const out = resolve(values.out);
  await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`Wrote ${out}`);
  return broken.length === 0 ? 0 : 1;
}
