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
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { inPrivateNetwork, NETWORK_ENV } from './bench/private-network.js';
import { currentNodeRunsHomebridge2, REQUIRED_NODE_MAJOR, resolveNode22Binary } from './lib/node-binary.js';

/** Set in the second run, so a Node that still lacks what is needed fails instead of looping. */
const RELAUNCHED = 'DOORBELL_MOTION_BENCH_RELAUNCHED';

async function relaunch(): Promise<number> {
  if (process.env[RELAUNCHED] !== undefined) {
    console.error(`The benchmark needs Node ${REQUIRED_NODE_MAJOR} or later with --expose-gc; this is Node ${process.versions.node}.`);
    return 1;
  }
  if (!currentNodeRunsHomebridge2()) {
    console.log(`Node ${process.versions.node} is older than the plugin supports: running the benchmark under Node ${REQUIRED_NODE_MAJOR} from the npm registry.`);
  }
  // Resolved first: inside the namespace there is no registry to download Node from.
  const node = await resolveNode22Binary();
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  const bench = { command: node, args: [tsx, '--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)] };
  const isolated = inPrivateNetwork(bench);
  if (isolated === undefined) {
    console.log('No private network namespace here (unshare -rn): the benchmark shares the machine\'s loopback.');
  }
  const { command, args } = isolated ?? bench;
  const env = { ...process.env, [RELAUNCHED]: '1', [NETWORK_ENV]: isolated === undefined ? 'shared' : 'private' };
  const child = spawn(command, args, { stdio: 'inherit', env });
  // Ctrl-C reaches the child from the terminal too; this process only waits for it to finish.
  const ignore = (): void => undefined;
  process.on('SIGINT', ignore);
  process.on('SIGTERM', (signal) => child.kill(signal));
  return new Promise((resolve) => child.once('close', (code) => resolve(code ?? 1)));
}

const ready = currentNodeRunsHomebridge2() && globalThis.gc !== undefined && process.env[RELAUNCHED] !== undefined;
process.exitCode = ready ? await (await import('./bench/main.js')).main() : await relaunch();
// A platform left behind by a failed phase would keep its timers and the process alive; every child
// process has been stopped by its pid by then.
process.exit();
