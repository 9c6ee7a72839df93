/**
 * Chaos: the plugin against a cloud that fails 30 % of its requests at random (a background minute is
 * 20 ms there), against an outage of every route on the production schedule with a fake clock, and a
 * debug-level run through all of it whose every log line is scanned for every secret handed out.
 * Attempts are counted where they arrive, in the simulator's request log.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordedRequest, Simulator } from '../simulator/types.js';
import { SCHEDULE_TIMING } from '../src/connection/schedule.js';
import type { PlatformTiming } from '../src/platform.js';
import { FAST, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed } from './support/platform-testbed.js';
import { runUntil } from './support/fake-clock.js';

/** One background minute, in real milliseconds. */
const MINUTE_MS = 20;

const TIMING: PlatformTiming = {
  ...FAST,
  // The list is read after the first run only: a read every 15 background minutes would blur where one run's attempts end.
  schedule: { retry: { firstMs: MINUTE_MS, factor: 2, maxMs: 60 * MINUTE_MS, jitter: true }, refreshMs: 60 * 60 * MINUTE_MS, listReadMs: SCHEDULE_TIMING.listReadMs },
  retry: { backoff: { firstMs: 1, factor: 2, maxMs: 4, jitter: true }, wait: async () => undefined },
  // A stalled request is given up after this, and retried, as after 10 s in production.
  requestTimeoutMs: 100,
};

/** Ten doorbells: two rounds of at most 8 concurrent subscriptions. */
const DOORBELLS = Array.from({ length: 10 }, (_, index) => ({ deviceId: String(2001 + index), name: `Door ${index + 1}` }));

/** Each call (region, login, registration, one doorbell's subscription) is tried at most this often in one run. */
const MAX_ATTEMPTS = 1 + 4;

const REGION_CALL = 'POST /api/v1/getUrlByEmail';

/**
 * The requests of each background run (one attempt to connect: session, registration, subscriptions)
 * as the simulator received them. A run ends where the plugin logs that it tries again later: the log
 * is watched as each line is written, so the boundary falls exactly between two runs whatever the
 * machine's load.
 */
class BackgroundRuns {
  /** How many requests the simulator had received at each retry notice, and the notice. */
  readonly notices: Array<{ requests: number; message: string }> = [];

  constructor(
    private readonly sim: Simulator,
    platform: RunningPlatform,
    onNotice: (notices: number) => void = () => undefined,
  ) {
    const { lines } = platform.log;
    const append = lines.push.bind(lines);
    lines.push = (...added) => {
      for (const { message } of added) {
        if (message.includes('Trying again in')) {
          this.notices.push({ requests: sim.requests.length, message });
          onNotice(this.notices.length);
        }
      }
      return append(...added);
    };
  }

  /** For each run, how often each call (method and path) was attempted. */
  attempts(): Array<Record<string, number>> {
    const ends = [...this.notices.map(({ requests }) => requests), this.sim.requests.length];
    return ends.map((end, run) => countCalls(this.sim.requests.slice(run === 0 ? 0 : ends[run - 1], end)));
  }
}

function countCalls(requests: readonly RecordedRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { method, path } of requests) {
    counts[`${method} ${path}`] = (counts[`${method} ${path}`] ?? 0) + 1;
  }
  return counts;
}

/** Names the random seed of a failed chaos run, so that it can be run again. */
async function withSeed(seed: number, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    (error as Error).message = `chaos seed ${seed} (CHAOS_SEED=${seed} replays it):\n${(error as Error).message}`;
    throw error;
  }
}

describe('chaos', () => {
  const testbed = usePlatformTestbed(DOORBELLS.map(({ deviceId }) => deviceId));

  it('subscribes every doorbell through 30 % random faults on every route, never trying a call more than 1 + 4 times a run', async () => {
    const seed = Number(process.env.CHAOS_SEED ?? randomInt(2 ** 31));
    await withSeed(seed, async () => {
      testbed.sim.injectChaos({ probability: 0.3, seed, stallMs: 300 });
      const platform = testbed.launch({ doorbells: DOORBELLS, timing: TIMING });
      const runs = new BackgroundRuns(testbed.sim, platform);

      await waitFor(() => allConfirmed(platform, DOORBELLS), 'every doorbell subscribed', 15_000);

      const attempts = runs.attempts();
      // A call fails a run only when all 5 of its attempts fail (0.3^5 each): five runs are already a storm.
      expect(attempts.length).toBeLessThanOrEqual(5);
      expect(attempts.flatMap((calls) => Object.entries(calls).filter(([, count]) => count > MAX_ATTEMPTS))).toEqual([]);
      const subscribed = new Set(attempts.flatMap((calls) => Object.keys(calls)).filter((call) => call.endsWith('/motions_subscribe')));
      expect(subscribed.size).toBe(DOORBELLS.length);
      expect(testbed.sim.invalidRequests()).toEqual([]);
      expect(testbed.sim.issuedTokens).toHaveLength(1);
    });
  });

  it('retries an outage of every route from 1 minute, doubling to 1 hour, with jitter, each run on time and of 1 + 4 attempts, then recovers', async () => {
    // The production schedule on a fake clock; sockets, the file system and the simulator run in real time.
    jest.useFakeTimers({ doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate'] });
    try {
      // The jitter at the bottom of its range takes half off each step of 2, 4 ... 64 minutes, capped at 60.
      const waitsInMinutes = [1, 2, 4, 8, 16, 30, 30, 30];
      const announced = ['1 minute', '2 minutes', '4 minutes', '8 minutes', '16 minutes', '30 minutes', '30 minutes', '30 minutes'];
      for (const route of ['region', 'login', 'register', 'subscribe'] as const) {
        testbed.sim.injectFault(route, { reset: true, times: 100_000 });
      }
      // The clients' own 10 s request timeout: however slow the machine, no answer is given up on.
      const platform = testbed.launch({ doorbells: DOORBELLS, timing: { ...FAST, schedule: { ...SCHEDULE_TIMING, random: () => 0 } } });
      const noticedAt: number[] = [];
      const runs = new BackgroundRuns(testbed.sim, platform, (notices) => {
        noticedAt.push(jest.now());
        // The outage ends as the last retry is announced: the run after it must get through.
        if (notices === announced.length) {
          testbed.sim.clearFaults();
        }
      });

      for (const [run, delay] of announced.entries()) {
        await runUntil(() => runs.notices.length > run, `retry notice ${run + 1}`, 1);
        expect(runs.notices[run].message).toMatch(new RegExp(`Trying again in ${delay}\\.$`));
        const delayMs = waitsInMinutes[run] * 60_000;
        const { requests } = runs.notices[run];

        await jest.advanceTimersByTimeAsync(noticedAt[run] + delayMs - 1 - jest.now());
        await sleep(50);
        expect([`${delay} less 1 ms`, testbed.sim.requests.length]).toEqual([`${delay} less 1 ms`, requests]);
        // Exactly on time: the clock stands still until the next run has sent its first request.
        await jest.advanceTimersByTimeAsync(1);
        await runUntil(() => testbed.sim.requests.length > requests, `run ${run + 2}, ${delay} later`, 0);
      }
      // The run that gets through is followed by the doorbell list read, which belongs to it.
      await runUntil(() => allConfirmed(platform, DOORBELLS) && testbed.sim.requestsTo('devices').length > 0, 'recovery and its list read', 1);

      const subscriptions = Object.fromEntries(DOORBELLS.map(({ deviceId }) => [`POST /clients_api/doorbots/${deviceId}/motions_subscribe`, 1]));
      expect(runs.attempts()).toEqual([
        ...announced.map(() => ({ [REGION_CALL]: MAX_ATTEMPTS })),
        { [REGION_CALL]: 1, 'POST /api/v4/auth/email/login/code': 1, 'PATCH /clients_api/device': 1, ...subscriptions, 'GET /clients_api/ring_devices': 1 },
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('logs no secret the simulator handed out, at debug level, through chaos, motion, a ring and a refused session', async () => {
    const seed = Number(process.env.CHAOS_SEED ?? randomInt(2 ** 31));
    await withSeed(seed, async () => {
      testbed.sim.injectChaos({ probability: 0.3, seed, stallMs: 300 });
      const timing = { ...TIMING, schedule: { ...TIMING.schedule, refreshMs: 400 } };
      const platform = testbed.launch({ doorbells: DOORBELLS, timing });
      await waitFor(() => allConfirmed(platform, DOORBELLS), 'every doorbell subscribed', 15_000);
      testbed.sim.clearFaults();

      await testbed.sim.deliverMotion(DOORBELLS[0].deviceId);
      await testbed.sim.deliverMotion(DOORBELLS[1].deviceId, { kind: 'ding' });
      testbed.sim.revokeToken(testbed.sim.issuedTokens[0]);
      await waitFor(() => logged(platform, 'no longer accepts this session'), 'the refused session at the refresh', 5_000);

      const lines = platform.log.lines;
      expect(lines.some(({ level }) => level === 'debug')).toBe(true);
      expect(testbed.sim.secrets.length).toBeGreaterThanOrEqual(7);
      expect(lines.filter(({ message }) => testbed.sim.secrets.some((secret) => message.includes(secret)))).toEqual([]);
    });
  });
});
