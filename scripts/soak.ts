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
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { currentNodeRunsHomebridge2, REQUIRED_NODE_MAJOR, resolveNode22Binary } from './lib/node-binary.js';

/**
 * gc() for the heap figure, and V8's optimizing compilers off: the machine code they make for the
 * week's busiest functions is heap too, megabytes of it that would read as growth of the plugin's.
 */
const V8_FLAGS = ['--expose-gc', '--no-opt', '--no-maglev', '--no-sparkplug'];

/** Set in the second run, so a Node that still lacks what is needed fails instead of looping. */
const RELAUNCHED = 'DOORBELL_MOTION_SOAK_RELAUNCHED';

async function relaunch(): Promise<number> {
  if (process.env[RELAUNCHED] !== undefined) {
    console.error(`The soak needs Node ${REQUIRED_NODE_MAJOR} or later with ${V8_FLAGS.join(' ')}; this is Node ${process.versions.node}.`);
    return 1;
  }
  if (!currentNodeRunsHomebridge2()) {
    console.log(`Node ${process.versions.node} is older than the plugin supports: running the soak under Node ${REQUIRED_NODE_MAJOR} from the npm registry.`);
  }
  const node = await resolveNode22Binary();
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  const child = spawn(node, [tsx, ...V8_FLAGS, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, [RELAUNCHED]: '1' },
  });
  // Ctrl-C reaches the child from the terminal too; this process only waits for it to finish.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', (signal) => child.kill(signal));
  return new Promise((resolve) => child.once('close', (code) => resolve(code ?? 1)));
}

const ready = currentNodeRunsHomebridge2() && globalThis.gc !== undefined && process.env[RELAUNCHED] !== undefined;
process.exitCode = ready ? await (await import('./soak/main.js')).main(process.argv.slice(2)) : await relaunch();
// A platform left behind by a failed week would keep the process alive; the week stops what it started.
process.exit();
