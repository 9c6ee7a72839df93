/**
 * `npm run soak -- --quick`: two simulated days of the same week, the same code as the full run, in a
 * process of its own (it installs a fake clock over every timer of its process). It must keep every
 * rule of the week, write exactly the keys of soak-results.json, and say which seed replays it.
 */
import { expect, it } from '@jest/globals';
import { OUTAGES_PER_WEEK, QUICK_WEEK } from '../../scripts/soak/week-plan.js';
import { RESULT_KEYS, violations } from '../../scripts/soak/results.js';
import { runQuickScript } from '../support/quick-script.js';

/**
 * The quick week runs on a fake clock, so only its speed depends on the machine: under a minute of a
 * two-core machine, but close to four when eight test runs share it. Ten minutes means it is stuck.
 */
const SOAK_TIMEOUT_MS = 600_000;

const SEED = 20_251_127;

it(
  'plays two simulated days of the week: every ring accounted for, every outage loud, nothing held on to',
  async () => {
    const { output, results } = await runQuickScript({ script: 'soak', args: ['--seed', String(SEED)], testTimeoutMs: SOAK_TIMEOUT_MS });
    expect(output).toContain(`seed ${SEED}`);
    expect(output).toContain('Every check holds.');

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
  },
  SOAK_TIMEOUT_MS,
);
