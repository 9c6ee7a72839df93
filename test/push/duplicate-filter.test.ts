/**
 * The duplicate filter's window is a duration, measured on a monotonic clock: a step of the system
 * clock (NTP, a user setting it) does not forget recent ids.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { DuplicateFilter } from '../../src/push/duplicate-filter.js';

const realNow = Date.now;
/** How far the system clock has been stepped, read by the stand-in for Date.now. */
let stepMs = 0;

afterEach(() => {
  jest.restoreAllMocks();
  stepMs = 0;
});

describe('DuplicateFilter with its own clock', () => {
  it('still drops a repeated id after the system clock stepped forward 11 minutes', () => {
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + stepMs);
    const filter = new DuplicateFilter();
    expect(filter.isDuplicate('1234567', 'evt-1')).toBe(false);

    stepMs = 11 * 60_000;
    expect(filter.isDuplicate('1234567', 'evt-1')).toBe(true);
    expect(filter.isDuplicate('1234567', 'evt-2')).toBe(false);
  });
});
