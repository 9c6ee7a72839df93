/**
 * `npm run soak -- --quick`: two simulated days of the same week, the same code as the full run, in a
 * process of its own (it installs a fake clock over every timer of its process). It must keep every
 * rule of the week, write exactly the keys of soak-results.json, and say which seed replays it.
 */
import { expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/paths.js';
import { OUTAGES_PER_WEEK, QUICK_WEEK } from '../../scripts/soak/week-plan.js';
import { RESULT_KEYS, violations } from '../../scripts/soak/results.js';

/** The quick week takes under a minute of a busy two-core machine; twice that means it is stuck. */
const SOAK_TIMEOUT_MS = 150_000;

const SEED = 20_251_127;

/** Runs the soak as `npm run soak -- --quick` does; resolves with its exit code and output. */
function runQuickSoak(out: string): Promise<{ code: number | null; output: string }> {
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  const args = [tsx, join(REPO_ROOT, 'scripts', 'soak.ts'), '--quick', '--seed', String(SEED), '--out', out];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: REPO_ROOT, timeout: SOAK_TIMEOUT_MS - 10_000, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

it(
  'plays two simulated days of the week: every ring accounted for, every outage loud, nothing held on to',
  async () => {
    const folder = await mkdtemp(join(tmpdir(), 'doorbell-motion-soak-test-'));
    try {
      const out = join(folder, 'soak-results.json');
      const { code, output } = await runQuickSoak(out);
      expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
      expect(output).toContain(`seed ${SEED}`);
      expect(output).toContain('Every check holds.');
      const results = JSON.parse(await readFile(out, 'utf8'));

      expect(Object.keys(results)).toEqual(RESULT_KEYS.top);
      expect(Object.keys(results.alerts)).toEqual(RESULT_KEYS.alerts);
      expect(Object.keys(results.outages)).toEqual(RESULT_KEYS.outages);
      expect(Object.keys(results.resources)).toEqual(RESULT_KEYS.resources);
      expect(violations(results, { minOutages: OUTAGES_PER_WEEK, refreshes: QUICK_WEEK.refreshes })).toEqual([]);
      expect(results.simulatedDays).toBeGreaterThanOrEqual(QUICK_WEEK.days);
      expect(results.alerts.sent).toBe(QUICK_WEEK.rings);
      // The session expires for two hours and more: the service does not send what rings meanwhile.
      expect(results.alerts.afterExpiry).toBeGreaterThan(0);
      // Thirty minutes cut off from the relay: what rang early in the cut comes back too old.
      expect(results.alerts.stale).toBeGreaterThan(0);
      expect(results.outages.maxOpenDelayS).toBeGreaterThanOrEqual(60);
      expect(results.resources.handlesAfterLaunch).toBeGreaterThan(0);
      expect(results.wallSeconds).toBeGreaterThan(0);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  },
  SOAK_TIMEOUT_MS,
);
