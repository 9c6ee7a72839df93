/**
 * soak-results.json and what it must show: every ring accounted for and none lost, every stale one
 * counted late in status.json's outages, every ring published while Homebridge was down delivered when
 * it is back, every outage of a minute or more seen by the plugin opening the Doorbell Alerts sensor
 * with one warning and closing it within 5 s of its end with one recovery line, nothing else opening
 * it, the session's expiry opening it within 16 minutes (its warning naming the expired account, the
 * other account's doorbells out of fault and its rings all delivered meanwhile), and the plugin holding no more timers,
 * sockets or heap after the week than after its launch.
 */
import type { OutageFigures } from './outages.js';
import type { RingCounts } from './ring-ledger.js';

export interface SoakResults {
  simulatedDays: number;
  refreshes: number;
  /** Homebridge restarted or killed, then launched again. */
  homebridgeRestarts: number;
  /** Rings published while Homebridge was down, and how many of them the button showed once it was back. */
  ringsDuringRestart: number;
  ringsDuringRestartDelivered: number;
  /** Minutes from the session's expiry to the sensor opening; null when it did not open after it. */
  expiryToSensorMaxMinutes: number | null;
  /** The plugin's warnings that a doorbell's battery is low: the week's battery turns low once. */
  lowBatteryWarnings: number;
  /** Outages that were the offline doorbell's hour, from the list read that found it offline to the one that found it back, the sensor open throughout. */
  offlineOutages: number;
  /** The week's two accounts, while the home's session is expired (to its doorbells subscribed again) and the cabin's is not. */
  accounts: {
    /** The cabin's rings meanwhile, and how many of them its doorbells' buttons showed. */
    otherRingsDuringExpiry: number;
    otherRingsDuringExpiryDelivered: number;
    /** The cabin's doorbells put in fault meanwhile. */
    otherFaultsDuringExpiry: number;
    /** The plugin's warnings that alerts stopped, meanwhile, and those of them naming the home's expired session and not the cabin. */
    expiryWarnings: number;
    expiryWarningsNamingAccount: number;
  };
  /** `late`: the `late` counts of status.json's outages, added up: the rings that came too late to show. */
  alerts: RingCounts & { late: number };
  outages: OutageFigures;
  resources: {
    /** Pending timers on the simulated clock plus open sockets and servers, after the launch. */
    handlesAfterLaunch: number;
    handlesAfterWeek: number;
    /** Heap after garbage collection, after the week less after the launch. */
    heapDeltaMiB: number;
  };
  wallSeconds: number;
}

/** The key set of soak-results.json, exactly. */
export const RESULT_KEYS = {
  top: [
    'simulatedDays',
    'refreshes',
    'homebridgeRestarts',
    'ringsDuringRestart',
    'ringsDuringRestartDelivered',
    'expiryToSensorMaxMinutes',
    'lowBatteryWarnings',
    'offlineOutages',
    'accounts',
    'alerts',
    'outages',
    'resources',
    'wallSeconds',
  ],
  accounts: ['otherRingsDuringExpiry', 'otherRingsDuringExpiryDelivered', 'otherFaultsDuringExpiry', 'expiryWarnings', 'expiryWarningsNamingAccount'],
  alerts: ['sent', 'delivered', 'caughtUp', 'stale', 'late', 'afterExpiry', 'lost'],
  outages: ['seen', 'opened', 'falseOpens', 'maxOpenDelayS', 'maxCloseDelayS', 'warnings', 'recoveries'],
  resources: ['handlesAfterLaunch', 'handlesAfterWeek', 'heapDeltaMiB'],
} as const;

/** RESULT_KEYS as keysOf writes a key set: the objects' keys as `parent.key`. */
const { top, ...nested } = RESULT_KEYS;
const EXPECTED_KEYS = [...top.filter((key) => !(key in nested)), ...Object.entries(nested).flatMap(([parent, keys]) => keys.map((key) => `${parent}.${key}`))].sort().join(',');

/** What a run must reach: the outages its plan holds, its refreshes, and its restarts of Homebridge. */
export interface Targets {
  minOutages: number;
  refreshes: number;
  homebridgeRestarts: number;
}

/** The sensor closes this soon after the calls or the stream that end an outage. */
const MAX_CLOSE_DELAY_S = 5;
/** It opens a minute after the failure, give or take the same. */
const MAX_OPEN_DELAY_S = 60 + MAX_CLOSE_DELAY_S;
const MAX_HEAP_DELTA_MIB = 1;
/** The doorbell list, read every 15 minutes, finds an expired session; the sensor opens a minute later. */
const MAX_EXPIRY_TO_SENSOR_MINUTES = 16;

/** Each rule the results break, in words; empty when they keep every one. */
export function violations(results: SoakResults, targets: Targets): string[] {
  const { accounts, alerts, outages, resources } = results;
  const accounted = alerts.delivered + alerts.stale + alerts.afterExpiry + alerts.lost;
  const rules: Array<[boolean, string]> = [
    [keysOf(results) !== EXPECTED_KEYS, `the keys are not exactly those of soak-results.json: ${keysOf(results)}`],
    [accounted !== alerts.sent, `${alerts.sent} rings sent but ${accounted} accounted for`],
    [alerts.caughtUp > alerts.delivered, `${alerts.caughtUp} caught up but only ${alerts.delivered} delivered`],
    [alerts.lost > 0, `${alerts.lost} rings lost`],
    [alerts.late !== alerts.stale, `${alerts.stale} rings dropped as stale but ${alerts.late} counted late in status.json's outages`],
    [results.refreshes < targets.refreshes, `${results.refreshes} refreshes, fewer than ${targets.refreshes}`],
    [results.homebridgeRestarts < targets.homebridgeRestarts, `${results.homebridgeRestarts} Homebridge restarts, fewer than ${targets.homebridgeRestarts}`],
    [results.ringsDuringRestart < 1, 'no ring was published while Homebridge was down'],
    [
      results.ringsDuringRestartDelivered !== results.ringsDuringRestart,
      `${results.ringsDuringRestartDelivered} of the ${results.ringsDuringRestart} rings published while Homebridge was down delivered once it was back`,
    ],
    [results.expiryToSensorMaxMinutes === null, 'the sensor did not open after the session expired'],
    [
      results.expiryToSensorMaxMinutes !== null && !(results.expiryToSensorMaxMinutes <= MAX_EXPIRY_TO_SENSOR_MINUTES),
      `the sensor opened ${results.expiryToSensorMaxMinutes} minutes after the session expired (at most ${MAX_EXPIRY_TO_SENSOR_MINUTES})`,
    ],
    [results.lowBatteryWarnings !== 1, `${results.lowBatteryWarnings} warnings that a battery is low, for one battery that ran low`],
    [results.offlineOutages !== 1, `${results.offlineOutages} outages for the doorbell offline for an hour, from the read that found it offline to the one that found it back (1 expected)`],
    [accounts.otherRingsDuringExpiry < 1, 'the other account\'s doorbells did not ring while the session had expired'],
    [
      accounts.otherRingsDuringExpiryDelivered !== accounts.otherRingsDuringExpiry,
      `${accounts.otherRingsDuringExpiryDelivered} of the other account's ${accounts.otherRingsDuringExpiry} rings delivered while the session had expired`,
    ],
    [accounts.otherFaultsDuringExpiry > 0, `the other account's doorbells were put in fault ${accounts.otherFaultsDuringExpiry} times while only the session had expired`],
    [accounts.expiryWarnings !== 1, `${accounts.expiryWarnings} warnings that alerts stopped while the session had expired (1 expected)`],
    [accounts.expiryWarningsNamingAccount !== accounts.expiryWarnings, 'the warning while the session had expired does not name the expired account\'s session, or names the other account'],
    [outages.seen < targets.minOutages, `${outages.seen} outages seen, fewer than ${targets.minOutages}`],
    [outages.opened !== outages.seen, `${outages.seen} outages seen but ${outages.opened} opened the sensor and kept it open to their end`],
    [outages.falseOpens > 0, `the sensor opened ${outages.falseOpens} times with no outage of a minute behind it`],
    [outages.maxOpenDelayS > MAX_OPEN_DELAY_S, `the sensor opened ${outages.maxOpenDelayS} s after an outage began (at most ${MAX_OPEN_DELAY_S})`],
    [outages.maxCloseDelayS > MAX_CLOSE_DELAY_S, `the sensor closed ${outages.maxCloseDelayS} s after an outage ended (at most ${MAX_CLOSE_DELAY_S})`],
    [outages.warnings !== outages.opened, `${outages.warnings} warnings for ${outages.opened} outages`],
    [outages.recoveries !== outages.opened, `${outages.recoveries} recovery lines for ${outages.opened} outages`],
    [resources.handlesAfterWeek > resources.handlesAfterLaunch, `${resources.handlesAfterWeek} handles after the week, ${resources.handlesAfterLaunch} after the launch`],
    [!(resources.heapDeltaMiB <= MAX_HEAP_DELTA_MIB), `the heap grew by ${resources.heapDeltaMiB} MiB (at most ${MAX_HEAP_DELTA_MIB})`],
  ];
  return rules.filter(([broken]) => broken).map(([, message]) => message);
}

/** Every key, nested ones as `parent.key`, sorted: the same text for the same key set. */
function keysOf(results: object): string {
  return Object.entries(results)
    .flatMap(([key, value]) => (typeof value === 'object' && value !== null ? Object.keys(value).map((inner) => `${key}.${inner}`) : [key]))
    .sort()
    .join(',');
}
