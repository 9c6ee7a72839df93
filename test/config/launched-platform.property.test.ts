/**
 * Nothing a user types can stop Homebridge: platform blocks shaped like config.schema.json, valid and
 * odd (support/config-arbitrary.ts), each through the configuration check and a platform launched on
 * real HAP, then shut down, with no exception escaping, ever (support/launch-each-config.ts, in a
 * process of its own so that it can watch that process's uncaught errors).
 */
import { expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LOOPBACK_GUARD_URL } from '../../scripts/lib/homebridge-process.js';
import { REPO_ROOT } from '../../scripts/lib/paths.js';
import type { LaunchCounts } from '../support/launch-each-config.js';
import { propertyRuns } from '../support/property-runs.js';

/** The property's weight: 200 launches under CI, 100 on a developer's machine (test/support/property-runs.ts). */
const LAUNCH_WEIGHT = 1_000;
const { numRuns } = propertyRuns(LAUNCH_WEIGHT);

const RUNNER = join(REPO_ROOT, 'test', 'support', 'launch-each-config.ts');

/** A generous bound: a thousand launches take well under a minute on two busy cores. */
const RUN_TIMEOUT_MS = 240_000;

/** Lines of the runner's stderr quoted on failure: the loopback guard's notes, the last one first to read. */
const STDERR_LINES = 30;

interface RunnerResult {
  counts: LaunchCounts;
  failure?: string;
}

/** Runs the launches in a child process (tsx, the loopback guard preloaded), stopped by its pid if it overruns. */
async function launchGeneratedBlocks(): Promise<{ result?: RunnerResult; exitCode: number | null; stderr: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', LOOPBACK_GUARD_URL, RUNNER, String(LAUNCH_WEIGHT)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const overrun = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr.push(line.slice(0, 500));
    stderr.splice(0, Math.max(0, stderr.length - STDERR_LINES));
  });
  let result: RunnerResult | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('RESULT ')) {
      result = JSON.parse(line.slice('RESULT '.length)) as RunnerResult;
    }
  });
  const exitCode = await new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  clearTimeout(overrun);
  return { result, exitCode, stderr };
}

it(
  `no generated block makes the check or a launched platform throw, or leaves an uncaught error (${numRuns} blocks)`,
  async () => {
    const { result, exitCode, stderr } = await launchGeneratedBlocks();
    if (result === undefined || result.failure !== undefined || exitCode !== 0) {
      const why = result?.failure ?? `the runner exited with ${String(exitCode)} and no result`;
      throw new Error(`${why}\n\nThe runner's last lines on stderr:\n${stderr.join('\n')}`);
    }
    const { counts } = result;
    expect(counts.launched).toBeGreaterThanOrEqual(numRuns);
    // Not a vacuous run: a good share of the blocks published doorbells and went to work, sending
    // requests (to loopback), and a good share were refused.
    expect(counts.accepted).toBeGreaterThan(numRuns * 0.3);
    expect(counts.refused).toBeGreaterThan(numRuns * 0.1);
    expect(counts.connections).toBeGreaterThan(0);
  },
  RUN_TIMEOUT_MS + 10_000,
);
