/**
 * What one run of the benchmark measures and how much of it: the full run behind the figures in
 * docs/performance.md, or the quick run the test suite uses to keep the script from rotting.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SUBSCRIPTION_CONCURRENCY } from '../../src/connection/subscriptions.js';
import { REPO_ROOT } from '../lib/paths.js';

/** Every cloud request takes this long, as a distant service would: the figures are read against it. */
export const CLOUD_LATENCY_MS = 100;

/** How many subscriptions the plugin keeps in flight at once: the width of one wave. */
export const SUBSCRIPTION_WAVE = SUBSCRIPTION_CONCURRENCY;

/** Start-up is timed with these many doorbells; the report's keys are n1, n10 and n100 whatever the run. */
export const STARTUP_SIZES = [1, 10, 100] as const;

/**
 * The largest start-up again with its doorbells shared out among this many accounts of a platform
 * block's `accounts` (10 of 10 beside one of 100): the accounts start at once, so it is held to the
 * same ideal.
 */
export const STARTUP_ACCOUNTS = { accounts: 10, doorbellsPerAccount: 10 } as const;

export const USAGE = [
  'usage: npm run bench -- [--quick] [--only memory|startup] [--out FILE]',
  '  --quick        a few doorbells and notifications (about a minute): checks the script works, not the plugin',
  '  --only memory  the memory figures alone (a few minutes), printed but not written to a file',
  '  --only startup the in-process start-up figures alone (one account, several accounts, the warm restart; under a minute), printed only',
  '  --out FILE     where the results go; default bench-results.json in this repository',
].join('\n');

/** A part of the benchmark that runs alone, for work on that figure. */
export type BenchOnly = 'memory' | 'startup';

export interface BenchSettings {
  quick: boolean;
  /** Only this part, its rows printed and nothing written; undefined: every phase. */
  only: BenchOnly | undefined;
  out: string;
  /** Doorbells on the bridge for the latency, burst and memory figures (HAP allows 150 on a bridge). */
  doorbells: number;
  /** Notifications timed per latency figure. */
  latencySamples: number;
  /**
   * Through a real Homebridge, rings per doorbell per ring figure instead: a doorbell presses at most
   * once in 5 s there, so each round takes 5 s.
   */
  homekitRingRounds: number;
  burstSize: number;
  /** Deliveries in flight at once during the burst: enough to keep the receiver busy, not so many that the sender runs out of sockets. */
  burstConcurrency: number;
  /** Start-ups of STARTUP_ACCOUNTS and of one account with as many doorbells, in turn: each figure is its median run. */
  accountsStartupPairs: number;
  /** Runs of the memory figures: a bare Homebridge, then with 1 doorbell, then with all, in turn. */
  memoryRuns: number;
  /** How long a Homebridge's heap may take to stop changing before its memory is read as it is. */
  settleMaxMs: number;
  /** Doorbells on the Matter bridge, and rounds of one motion alert each: one sample per alert. */
  matterDoorbells: number;
  matterRounds: number;
}

export function parseSettings(args: string[]): BenchSettings {
  const { values } = parseArgs({
    args,
    options: { quick: { type: 'boolean' }, only: { type: 'string' }, out: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  const quick = values.quick === true;
  if (values.only !== undefined && values.only !== 'memory' && values.only !== 'startup') {
    throw new Error(`--only takes memory or startup, not ${values.only}`);
  }
  const only = values.only as BenchOnly | undefined;
  const out = values.out ?? join(REPO_ROOT, 'bench-results.json');
  return quick
    ? { quick, only, out, doorbells: 5, latencySamples: 50, homekitRingRounds: 1, burstSize: 500, burstConcurrency: 16, accountsStartupPairs: 1, memoryRuns: 1, settleMaxMs: 5_000, matterDoorbells: 5, matterRounds: 1 }
    : { quick, only, out, doorbells: 100, latencySamples: 1000, homekitRingRounds: 2, burstSize: 10_000, burstConcurrency: 32, accountsStartupPairs: 3, memoryRuns: 5, settleMaxMs: 30_000, matterDoorbells: 100, matterRounds: 5 };
}

/** Doorbell ids of the benchmark: plain seven-digit ids, the same in every run. */
export function doorbellIds(count: number): string[] {
  return Array.from({ length: count }, (_, index) => String(1_000_001 + index));
}

const EVERY_CONTROL = { motionSwitch: true, chimeSwitch: true, detections: ['person', 'vehicle', 'other'] };

/**
 * The doorbells[] entries of the platform block for these ids, each with every control in the Home
 * app (both switches, a sensor per detection): what each ring and motion is timed through. Without
 * `everyControl`, default doorbells: a motion sensor and the doorbell button, as a user gets them.
 */
export function doorbellEntries(ids: readonly string[], everyControl = true): Array<{ deviceId: string; name: string }> {
  return ids.map((deviceId, index) => ({ deviceId, name: `Doorbell ${index + 1}`, ...(everyControl ? EVERY_CONTROL : {}) }));
}

/** The ideal start-up: region, login and registration, then the subscriptions in waves. */
export function idealStartupMs(doorbells: number): number {
  return (3 + Math.ceil(doorbells / SUBSCRIPTION_WAVE)) * CLOUD_LATENCY_MS;
}
