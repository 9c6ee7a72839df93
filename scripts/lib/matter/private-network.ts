/**
 * Homebridge in a private network namespace that has only a loopback (`unshare -rn`), for Matter.
 *
 * Homebridge's Matter server listens on every interface and announces itself by multicast, with no
 * option to keep it on loopback, so it runs where there is no other interface. The Matter controller
 * has to reach it there, so it runs in the same namespace, in the host process
 * (private-network-host.ts) that starts Homebridge. Everything else stays in the test's process: the
 * TCP ports Homebridge and the test use of each other (the simulator's, HAP's, the push receiver's)
 * are carried through Unix sockets, so both sides keep using 127.0.0.1 and the same port numbers.
 *
 * The Node binary must be known before: nothing in the namespace reaches the npm registry.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { homebridgeCommand, HomebridgeProcess, type HomebridgeLaunch } from '../homebridge-process.js';
import { REPO_ROOT } from '../paths.js';
import type { HostMessage, HostOrder } from './private-network-host.js';
import { tcpToUnix, unixToTcp, type TunnelEnd } from './tunnel.js';

const HOST = fileURLToPath(new URL('./private-network-host.ts', import.meta.url));

export interface PrivateNetworkLaunch extends HomebridgeLaunch {
  /** Where the tunnels' Unix sockets go: a short path, since a socket's path may not exceed ~100 bytes. */
  socketFolder: string;
  /** Loopback addresses of servers out here that Homebridge reaches (the simulator, the relay); absent ones left out. */
  outboundUrls: ReadonlyArray<string | undefined>;
  /** Ports of Homebridge's servers that the test reaches (HAP, the push receiver in direct mode). */
  inboundPorts: readonly number[];
}

export interface PrivateHomebridge {
  homebridge: HomebridgeProcess;
  /** The host process, which runs the Matter controller: its IPC channel carries the requests (see matter-client.ts). */
  host: ChildProcess;
  /** Resolves once the process has ended and the tunnels' ports out here are free again. */
  released: Promise<void>;
}

export async function startInPrivateNetwork(launch: PrivateNetworkLaunch): Promise<PrivateHomebridge> {
  await mkdir(launch.socketFolder, { recursive: true });
  const tunnel = (port: number): TunnelEnd => ({ port, socket: join(launch.socketFolder, `${port}.sock`) });
  const outboundPorts = new Set(launch.outboundUrls.flatMap((url) => (url === undefined ? [] : [Number(new URL(url).port)])));
  const outbound = [...outboundPorts].map(tunnel);
  const inbound = launch.inboundPorts.map(tunnel);
  // A previous run killed before it cleaned up may have left its sockets.
  await Promise.all(outbound.map(({ socket }) => rm(socket, { force: true })));
  const tunnels = await Promise.all([...outbound.map(unixToTcp), ...inbound.map(tcpToUnix)]);

  const { command, args, cwd } = homebridgeCommand(launch);
  // Homebridge's own environment (its HOME, TMPDIR) is for Homebridge: the host writes tsx's cache.
  const order: HostOrder = { homebridge: { command, args, cwd, env: launch.env ?? {} }, outbound, inbound };
  // `unshare` without --fork runs the host in its own place: the child's pid, and Node's IPC channel,
  // are the host's. `--import tsx` resolves from the repository, where tsx is installed. The advanced
  // serialization carries Matter's 64-bit ids, which are bigints.
  const host = spawn('unshare', ['-rn', launch.nodeBinary, '--import', 'tsx', HOST, JSON.stringify(order)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'advanced',
  });
  const homebridge = new HomebridgeProcess(host, 'Homebridge in a private network');
  let homebridgePid: number | undefined;
  host.on('message', (message: HostMessage) => {
    if ('homebridgePid' in message) {
      homebridgePid = message.homebridgePid;
    }
  });
  // A SIGKILL of the host cannot pass on to Homebridge: it is stopped by its own pid.
  homebridge.onForcedStop(() => {
    try {
      if (homebridgePid !== undefined) {
        process.kill(homebridgePid, 'SIGKILL');
      }
    } catch {
      // Gone already.
    }
  });
  const released = homebridge.closed.then(async () => {
    await Promise.all(tunnels.map((close) => close()));
  });
  return { homebridge, host, released };
}
