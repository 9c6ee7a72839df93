/**
 * The benchmark's command line: `--only memory` runs the memory figures alone, as the full run takes
 * them (five runs of each set-up), and any other part is refused by name rather than run whole.
 */
import { describe, expect, it } from '@jest/globals';
import { parseSettings } from '../../scripts/bench/settings.js';

describe('the benchmark command line', () => {
  it('takes --only memory, with the full run\'s memory settings, and every phase without it', () => {
    const memory = parseSettings(['--only', 'memory']);
    const full = parseSettings([]);

    expect(memory).toMatchObject({ only: 'memory', memoryRuns: full.memoryRuns, doorbells: 100, quick: false });
    expect(full.only).toBeUndefined();
    expect(parseSettings(['--quick', '--only', 'memory'])).toMatchObject({ only: 'memory', quick: true, memoryRuns: 1 });
  });

  it('refuses a part it cannot run alone, naming it', () => {
    expect(() => parseSettings(['--only', 'latency'])).toThrow('--only takes memory or startup, not latency');
  });

  it('takes --only startup, with the full run\'s doorbells', () => {
    expect(parseSettings(['--only', 'startup'])).toMatchObject({ only: 'startup', doorbells: 100, quick: false });
  });
});
