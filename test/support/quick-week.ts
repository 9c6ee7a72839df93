/**
 * What `npm run soak -- --quick` must show: two simulated days of the same week, the same code as the
 * full run. It must keep every rule of the week, write exactly the keys of soak-results.json, and say
 * which seed replays it. Every case of the week is in it: Homebridge restarted and killed with rings
 * meanwhile, the half-open cut, two rings caught up together, the expiry found by the doorbell list
 * read (one of the two accounts', the other's rings all shown meanwhile), a battery running low across
 * both restarts, a doorbell offline for an hour. The fresh-clone smoke test runs it as the docs say.
 */
import { expect } from '@jest/globals';
import { OUTAGES_PER_WEEK, planWeek, QUICK_WEEK } from '../../scripts/soak/week-plan.js';
import { RESULT_KEYS, violations, type SoakResults } from '../../scripts/soak/results.js';

/** The quick week's seed in the tests: one known week, replayable. */
export const QUICK_WEEK_SEED = 20_251_127;

/** The quick week of QUICK_WEEK_SEED kept every rule: `output` is what it printed, `results` its soak-results.json. */
export function expectQuickWeekKept(output: string, results: SoakResults): void {
  expect(output).toContain(`seed ${QUICK_WEEK_SEED}`);
  expect(output).toContain('Every check holds.');

  expect(Object.keys(results)).toEqual(RESULT_KEYS.top);
  expect(Object.keys(results.accounts)).toEqual(RESULT_KEYS.accounts);
  expect(Object.keys(results.alerts)).toEqual(RESULT_KEYS.alerts);
  expect(Object.keys(results).sort()).toEqual([...RESULT_KEYS.top].sort());
  expect(Object.keys(results.outages)).toEqual(RESULT_KEYS.outages);
  expect(Object.keys(results.resources)).toEqual(RESULT_KEYS.resources);
  const { homebridgeRestarts } = planWeek({ ...QUICK_WEEK, doorbells: 2 }, QUICK_WEEK_SEED);
  expect(violations(results, { minOutages: OUTAGES_PER_WEEK, refreshes: QUICK_WEEK.refreshes, homebridgeRestarts: homebridgeRestarts.length })).toEqual([]);
  expect(results.simulatedDays).toBeGreaterThanOrEqual(QUICK_WEEK.days);
  // The plan's rings at the home's doorbells, and the cabin's rung while the home's session had expired.
  expect(results.alerts.sent).toBe(QUICK_WEEK.rings + results.accounts.otherRingsDuringExpiry);
  // Two accounts: while the home's session had expired, the cabin's rings all arrived, its doorbells
  // stayed out of fault, and the one warning named the home's expired session.
  expect(results.accounts.otherRingsDuringExpiry).toBeGreaterThanOrEqual(5);
  expect(results.accounts.otherRingsDuringExpiryDelivered).toBe(results.accounts.otherRingsDuringExpiry);
  expect(results.accounts.otherFaultsDuringExpiry).toBe(0);
  expect(results.accounts.expiryWarnings).toBe(1);
  expect(results.accounts.expiryWarningsNamingAccount).toBe(1);
  // The session expires for two hours and more: the service does not send what rings meanwhile.
  expect(results.alerts.afterExpiry).toBeGreaterThan(0);
  // Thirty minutes cut off from the relay, and the half-open cut's ring: they come back too old, and count late.
  expect(results.alerts.stale).toBeGreaterThan(0);
  expect(results.alerts.late).toBe(results.alerts.stale);
  // Restarted and killed, with a ring at each doorbell while down: every one shown once it is back.
  expect(results.homebridgeRestarts).toBe(2);
  expect(results.ringsDuringRestart).toBe(4);
  expect(results.ringsDuringRestartDelivered).toBe(results.ringsDuringRestart);
  expect(results.expiryToSensorMaxMinutes).toBeLessThanOrEqual(16);
  // Low from before the restart to after the kill: warned of once, not again at either launch.
  expect(results.lowBatteryWarnings).toBe(1);
  // The offline hour is one outage, from the list read that found it to the one that found it back.
  expect(results.offlineOutages).toBe(1);
  expect(results.outages.maxOpenDelayS).toBeGreaterThanOrEqual(60);
  expect(results.resources.handlesAfterLaunch).toBeGreaterThan(0);
  expect(results.wallSeconds).toBeGreaterThan(0);
}
