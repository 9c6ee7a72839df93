import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Schedule, SCHEDULE_TIMING, type RunReason } from '../../src/connection/schedule.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const STEPS_IN_MINUTES = [2, 4, 8, 16, 32, 60, 60, 60, 60];

/** The jitter at the top of its range: each wait is its whole step. */
const WHOLE_STEP = { ...SCHEDULE_TIMING, random: () => 1 };

describe('Schedule', () => {
  let runs: RunReason[];
  let schedule: Schedule;

  beforeEach(() => {
    jest.useFakeTimers();
    runs = [];
    schedule = new Schedule(WHOLE_STEP, (reason) => runs.push(reason));
  });

  afterEach(() => {
    schedule.stop();
    jest.useRealTimers();
  });

  it('runs at once on start', () => {
    schedule.runNow();
    jest.advanceTimersByTime(0);
    expect(runs).toEqual(['start']);
  });

  it('retries after 2 minutes at the most, doubling, up to 1 hour', () => {
    const delays = Array.from({ length: 9 }, () => schedule.retryLater());
    expect(delays).toEqual(STEPS_IN_MINUTES.map((minutes) => minutes * MINUTE));
  });

  it('retries from 1 minute, taking up to half off each step, and runs exactly after the wait it returns', () => {
    schedule.stop();
    schedule = new Schedule({ ...SCHEDULE_TIMING, random: () => 0 }, (reason) => runs.push(reason));
    const delays = Array.from({ length: 9 }, () => schedule.retryLater());
    expect(delays).toEqual(STEPS_IN_MINUTES.map((minutes) => (minutes / 2) * MINUTE));

    expect(delays[0]).toBe(MINUTE);
    jest.advanceTimersByTime(30 * MINUTE - 1);
    expect(runs).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(runs).toEqual(['retry']);
  });

  it('jitters by default, each wait within the upper half of its step', () => {
    schedule.stop();
    schedule = new Schedule(SCHEDULE_TIMING, (reason) => runs.push(reason));
    const delays = Array.from({ length: 9 }, () => schedule.retryLater());
    delays.forEach((delayMs, failure) => {
      expect(delayMs).toBeGreaterThanOrEqual((STEPS_IN_MINUTES[failure] / 2) * MINUTE);
      expect(delayMs).toBeLessThanOrEqual(STEPS_IN_MINUTES[failure] * MINUTE);
    });
    // Math.random lands on the very top of its range nine times in a row practically never.
    expect(delays).not.toEqual(STEPS_IN_MINUTES.map((minutes) => minutes * MINUTE));
  });

  it('keeps one run pending at most: the latest request replaces the earlier one', () => {
    schedule.retryLater();
    schedule.refreshLater();
    jest.advanceTimersByTime(11 * HOUR);
    expect(runs).toEqual([]);
    jest.advanceTimersByTime(HOUR);
    expect(runs).toEqual(['refresh']);
  });

  it('starts the backoff over after a success', () => {
    schedule.retryLater();
    schedule.retryLater();
    schedule.refreshLater();
    expect(schedule.retryLater()).toBe(2 * MINUTE);
  });

  it('runs nothing while paused, until told to run now', () => {
    schedule.retryLater();
    schedule.pause();
    jest.advanceTimersByTime(2 * HOUR);
    expect(runs).toEqual([]);
    schedule.runNow();
    jest.advanceTimersByTime(0);
    expect(runs).toEqual(['start']);
  });

  it('reads the list at once and then every 15 minutes, none while paused until the next start, none after the last', () => {
    schedule.stop();
    let reads = 0;
    schedule = new Schedule(WHOLE_STEP, (reason) => runs.push(reason), undefined, () => (reads += 1));
    schedule.readListNow();
    jest.advanceTimersByTime(0);
    expect(reads).toBe(1);
    jest.advanceTimersByTime(15 * MINUTE - 1);
    expect(reads).toBe(1);
    jest.advanceTimersByTime(1);
    expect(reads).toBe(2);

    schedule.pause();
    schedule.readListNow();
    jest.advanceTimersByTime(HOUR);
    expect(reads).toBe(2);
    schedule.runNow();
    schedule.readListNow();
    jest.advanceTimersByTime(15 * MINUTE);
    expect(reads).toBe(4);

    schedule.endListReads();
    schedule.readListNow();
    jest.advanceTimersByTime(HOUR);
    expect(reads).toBe(4);
  });

  it('leaves no timer behind once stopped, and schedules nothing after', () => {
    schedule.retryLater();
    schedule.readListNow();
    schedule.stop();
    schedule.refreshLater();
    schedule.runNow();
    schedule.readListNow();
    expect(jest.getTimerCount()).toBe(0);
  });
});
