/**
 * `npm run soak`: a simulated week of the plugin against the simulated services and the loopback
 * relay, on a fake clock with real sockets (docs/soak.md). Prints a summary, writes
 * soak-results.json, and exits non-zero when a rule of the week is broken.
 *
 *   npm run soak -- [--quick] [--seed N] [--out FILE]
 *
 * The plugin needs Node 22 and the heap figure needs gc(): this runs itself again under Node 22 (from
 * the npm registry on an older Node, as `npm test` does) with the V8 flags below. Nothing of the soak
 * is loaded before that, since the plugin's modules do not load on an older Node.
 */
import { isSecondRun, relaunchUnderNode22, type SecondRun } from './lib/node-binary.js';

const SOAK: SecondRun = {
  name: 'soak',
  scriptUrl: import.meta.url,
  /** gc() for the heap figure, which leaves compiled code out (scripts/soak/resources.ts). */
  v8Flags: ['--expose-gc'],
  marker: 'DOORBELL_MOTION_SOAK_RELAUNCHED',
};

process.exitCode = isSecondRun(SOAK) ? await (await import('./soak/main.js')).main(process.argv.slice(2)) : await relaunchUnderNode22(SOAK);
// A platform left behind by a failed week would keep the process alive; the week stops what it started.
process.exit();
