/**
 * The benchmark itself, once bench.ts has made sure of Node 22 and gc(): the four phases in turn,
 * then the table and bench-results.json.
 */
import { existsSync } from 'node:fs';
import { parseCommandLine } from '../../simulator/cli.js';
import { PLUGIN_ENTRY } from '../lib/paths.js';
import { BenchHomebridge } from './homebridge.js';
import { matterPhase } from './matter.js';
import { memoryPhase } from './memory.js';
import { directPhase, homebridgePhase, relayPhase } from './phases.js';
import { describeMachine, formatMemoryTable, formatStartupTable, formatTable, resultsOf, writeResults } from './report.js';
import { parseSettings, USAGE, type BenchSettings } from './settings.js';

async function runBench(settings: BenchSettings): Promise<void> {
  const startedAt = performance.now();
  const machine = describeMachine();
  const step = (what: string): void => console.log(`[bench] ${what} (${Math.round((performance.now() - startedAt) / 1000)} s)`);
  if (settings.only === 'memory') {
    step(`memory alone, real Homebridge: ${settings.memoryRuns} run(s)`);
    const memory = await memoryPhase(settings);
    console.log(`\n${formatMemoryTable(memory, machine, Math.round((performance.now() - startedAt) / 100) / 10)}`);
    return;
  }
  if (settings.only === 'startup') {
    step('start-up alone, in this process');
    const { startup, accountsStartup, warmRestart } = await relayPhase(settings);
    console.log(`\n${formatStartupTable({ ...startup, accounts: accountsStartup }, warmRestart, machine, Math.round((performance.now() - startedAt) / 100) / 10)}`);
    return;
  }
  step('start-up, warm restart and the relay, in this process');
  const relay = await relayPhase(settings);
  step('the receiver and the burst, in this process');
  const direct = await directPhase(settings);
  step('start-up and HomeKit, real Homebridge');
  const homebridge = await homebridgePhase(settings);
  step('Matter, real Homebridge in a private network, with a Matter controller');
  const matter = await matterPhase(settings);
  step(`memory, real Homebridge: ${settings.memoryRuns} run(s)`);
  const memory = await memoryPhase(settings);
  const durationS = Math.round((performance.now() - startedAt) / 100) / 10;
  const results = resultsOf(settings, { relay, direct, homebridge, matter, memory }, machine, durationS);
  await writeResults(settings.out, results);
  console.log(`\n${formatTable(results)}\n\nWritten to ${settings.out}`);
}

/** Ctrl-C or a test's timeout: the Homebridge children are stopped before this process goes. */
function stopOnSignal(): void {
  const stop = (): void => {
    console.error('[bench] interrupted: stopping Homebridge');
    void BenchHomebridge.disposeAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Resolves with the exit code: 0 whatever the figures, 1 when the benchmark itself could not run. */
export async function main(): Promise<number> {
  stopOnSignal();
  const settings = parseCommandLine(parseSettings, USAGE);
  if (settings === undefined) {
    return 2;
  }
  if (!existsSync(PLUGIN_ENTRY)) {
    console.error('The plugin is not built yet: run `npm run build` first (`npm run bench` does both).');
    return 1;
  }
  try {
    await runBench(settings);
    return 0;
  } catch (error) {
    console.error(`The benchmark could not finish: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  }
}
