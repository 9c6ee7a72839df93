import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { BackoffDelays, backoffDelay, type Backoff } from '../../src/values/backoff.js';
import { propertyRuns } from '../support/property-runs.js';

/** Doubling backoffs of whole milliseconds, from a first step to a cap at or above it. */
const DOUBLING = fc
  .record({ firstMs: fc.integer({ min: 1, max: 100_000 }), capSteps: fc.integer({ min: 0, max: 30 }), extraMs: fc.integer({ min: 0, max: 100_000 }) })
  .map(({ firstMs, capSteps, extraMs }): Backoff => ({ firstMs, factor: 2, maxMs: Math.min(firstMs * 2 ** capSteps + extraMs, 2 ** 31 - 1), jitter: true }));

/** What Math.random may give, and its two ends. */
const RANDOMS = fc.array(fc.oneof(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.constantFrom(0, 1 - 2 ** -53)), {
  minLength: 1,
  maxLength: 60,
});

/** The steps as the rule states them: the first, then each twice the one before, none past the cap. */
function doublingSteps(backoff: Backoff, count: number): number[] {
  const steps = [Math.min(backoff.firstMs, backoff.maxMs)];
  while (steps.length < count) {
    steps.push(Math.min(steps[steps.length - 1] * 2, backoff.maxMs));
  }
  return steps;
}

/** A random source that gives `values` in turn. */
function playing(values: readonly number[]): () => number {
  let next = 0;
  return () => values[next++ % values.length];
}

describe('BackoffDelays', () => {
  it('waits within the upper half of each step, the steps doubling to the cap', () => {
    fc.assert(
      fc.property(DOUBLING, RANDOMS, (backoff, randoms) => {
        const delays = new BackoffDelays(backoff, playing(randoms));
        const waits = randoms.map(() => delays.next());
        doublingSteps(backoff, randoms.length).forEach((stepMs, failure) => {
          expect(Number.isInteger(waits[failure])).toBe(true);
          expect(waits[failure]).toBeGreaterThanOrEqual(stepMs / 2);
          expect(waits[failure]).toBeLessThanOrEqual(stepMs);
        });
      }),
      propertyRuns(2_000),
    );
  });

  it('waits each whole step without jitter, and starts over from the first after a reset', () => {
    fc.assert(
      fc.property(DOUBLING, fc.integer({ min: 1, max: 40 }), (jittered, failures) => {
        const backoff = { ...jittered, jitter: false };
        const delays = new BackoffDelays(backoff, () => 0);
        const steps = doublingSteps(backoff, failures);
        expect(steps.map(() => delays.next())).toEqual(steps);
        delays.reset();
        expect(delays.next()).toBe(steps[0]);
      }),
      propertyRuns(1_000),
    );
  });
});

describe('backoffDelay', () => {
  const backoff: Backoff = { firstMs: 60_000, factor: 2, maxMs: 3_600_000, jitter: true };

  it('is half the step at 0, three quarters at 0.5, and the whole step at 1', () => {
    expect([0, 0.5, 1].map((random) => backoffDelay(backoff, 1, () => random))).toEqual([60_000, 90_000, 120_000]);
  });

  it('jitters the cap too, so many homes do not fall back in step there', () => {
    expect([0, 1].map((random) => backoffDelay(backoff, 20, () => random))).toEqual([1_800_000, 3_600_000]);
  });
});
