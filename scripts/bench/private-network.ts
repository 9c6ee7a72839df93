/**
 * The benchmark runs in a network namespace of its own where the machine allows it (`unshare -rn`:
 * a user namespace too, so no root is needed where unprivileged user namespaces are allowed). There
 * only its loopback exists: no other process on the machine (another test run's Homebridge announcing
 * itself over mDNS, say) talks to the Homebridges it measures, and nothing it starts can reach out.
 *
 * Plain Node APIs only: bench.ts uses this before it knows the Node is new enough for the plugin.
 */
import { spawnSync } from 'node:child_process';

/** Set by bench.ts for the benchmark it starts: `private` in a namespace of its own, `shared` without. */
export const NETWORK_ENV = 'DOORBELL_MOTION_BENCH_NETWORK';

/** Inside the namespace, loopback starts down: bring it up, then become the benchmark. */
const LOOPBACK_UP_THEN_RUN = 'ip link set lo up && exec "$@"';

export interface Command {
  command: string;
  args: string[];
}

/** The same command, run in a new network namespace with loopback up; undefined where that is not allowed. */
export function inPrivateNetwork({ command, args }: Command): Command | undefined {
  const probe = spawnSync('unshare', ['-rn', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore', timeout: 10_000 });
  if (probe.status !== 0) {
    return undefined;
  }
  return { command: 'unshare', args: ['-rn', 'sh', '-c', LOOPBACK_UP_THEN_RUN, 'sh', command, ...args] };
}
