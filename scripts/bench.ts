/**
 * `npm run bench`: how fast and how lean the plugin is, against the simulator with a fixed 100 ms
 * cloud latency and with a real Homebridge and HomeKit controller where the figure is about HomeKit.
 * Prints a table and writes bench-results.json; it measures and never fails on a figure.
 *
 *   npm run bench -- [--quick] [--out FILE]
 *
 * The plugin needs Node 22 (as Homebridge 2 does) and the heap figures need gc(): this runs itself
 * again under Node 22 (from the npm registry on an older Node, as `npm test` does) with the flag, and,
 * where the machine allows it, in a network namespace of its own (bench/private-network.ts). Nothing
 * of the benchmark is loaded before that, since the plugin's modules do not load on an older Node.
 */
import { inPrivateNetwork, NETWORK_ENV } from './bench/private-network.js';
import { isSecondRun, relaunchUnderNode22, type SecondRun } from './lib/node-binary.js';

const BENCH: SecondRun = {
  name: 'benchmark',
  scriptUrl: import.meta.url,
  v8Flags: ['--expose-gc'],
  marker: 'DOORBELL_MOTION_BENCH_RELAUNCHED',
  wrap: (direct) => {
    const isolated = inPrivateNetwork(direct);
    if (isolated === undefined) {
      console.log('No private network namespace here (unshare -rn): the benchmark shares the machine\'s loopback.');
    }
    return { ...(isolated ?? direct), env: { [NETWORK_ENV]: isolated === undefined ? 'shared' : 'private' } };
  },
};

process.exitCode = isSecondRun(BENCH) ? await (await import('./bench/main.js')).main() : await relaunchUnderNode22(BENCH);
// A platform left behind by a failed phase would keep its timers and the process alive; every child
// process has been stopped by its pid by then.
process.exit();
