// jest's own order of test files, except that those named in LONGEST start first. Without a timing
// cache (a fresh clone, as CI runs) jest orders files by size, and the Doorbell Alerts e2e file, which
// mostly waits out outages in real time, started late: its tier ran on one worker for two minutes
// after the other had nothing left. In the smoke tier the fresh clone, which installs the project and
// runs its quick soak, is the longest by far.
import TestSequencerModule from '@jest/test-sequencer';

const TestSequencer = TestSequencerModule.default ?? TestSequencerModule;

/** Test files that take longest, by the end of their path, longest first. */
const LONGEST = ['/test/e2e/alerts-sensor.e2e.test.ts', '/test/e2e/fresh-clone.e2e.test.ts'];

export default class LongestFirst extends TestSequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    const rank = (test) => LONGEST.findIndex((end) => test.path.endsWith(end));
    const longest = sorted.filter((test) => rank(test) >= 0).sort((a, b) => rank(a) - rank(b));
    return [...longest, ...sorted.filter((test) => rank(test) < 0)];
  }
}
