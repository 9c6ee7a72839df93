import { describe, expect, it } from '@jest/globals';
import { describeDuration } from '../../src/values/time.js';

const MINUTE = 60_000;

describe('describeDuration', () => {
  it('says minutes from one minute up, seconds below, never 0 s', () => {
    expect([describeDuration(MINUTE), describeDuration(120 * MINUTE), describeDuration(1500), describeDuration(10), describeDuration(0)]).toEqual([
      '1 minute',
      '120 minutes',
      '2 s',
      '1 s',
      '1 s',
    ]);
  });

  it('leaves the sign to the sentence: a clock behind by 5 minutes is 5 minutes', () => {
    expect([describeDuration(-5 * MINUTE), describeDuration(-75_000)]).toEqual(['5 minutes', '1 minute']);
  });
});
