/**
 * The first process inside a private network namespace (`unshare -rn`, see private-network.ts): it
 * brings up the namespace's loopback, carries the test's TCP ports in and out through Unix sockets,
 * runs Homebridge, and hosts the Matter controller, which must share the namespace with Homebridge's
 * Matter server. It answers the test on file descriptor 3 (JSON lines); Homebridge's output goes
 * straight to its own stdout and stderr. It ends when Homebridge ends, with Homebridge's exit status,
 * and passes the signals that stop it on to Homebridge.
 */
import { execFileSync, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { Socket, type Server } from 'node:net';
import process from 'node:process';
import type { HomebridgeCommand } from '../../../../scripts/lib/homebridge-process.js';
import { withTimeout } from '../../../../scripts/lib/timeout.js';
import { JsonLinesPeer } from './json-lines.js';
import { MatterTestController, type ControllerSettings } from './matter-controller.js';
import { closeServers, tcpToUnix, unixToTcp, type TunnelEnd } from './tunnel.js';

export interface HostOrder {
  /** `env` is added to the host's own environment. */
  homebridge: HomebridgeCommand;
  /** Servers outside that Homebridge reaches (the simulator): accepted here on loopback. */
  outbound: TunnelEnd[];
  /** Homebridge's servers that the test reaches (HAP, the push receiver): accepted outside. */
  inbound: TunnelEnd[];
}

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** Closing ends its subscription and session: quick, unless the bridge no longer answers. */
const CONTROLLER_CLOSE_TIMEOUT_MS = 3_000;

/**
 * Loopback up, with multicast: Matter's mDNS joins its multicast groups on every interface and warns
 * when it cannot. Nothing leaves the namespace either way.
 */
function bringUpLoopback(): void {
  for (const args of [
    ['link', 'set', 'lo', 'up', 'multicast', 'on'],
    ['route', 'add', '224.0.0.0/4', 'dev', 'lo'],
    ['-6', 'route', 'add', 'multicast', 'ff00::/8', 'dev', 'lo'],
  ]) {
    execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'inherit'] });
  }
}

async function openTunnels({ inbound, outbound }: HostOrder): Promise<Server[]> {
  await Promise.all(inbound.map(({ socket }) => rm(socket, { force: true })));
  return Promise.all([...outbound.map(tcpToUnix), ...inbound.map(unixToTcp)]);
}

function serveController(channel: JsonLinesPeer): { close(): Promise<void> } {
  let controller: MatterTestController | undefined;
  channel.serve(async (method, params) => {
    if (method === 'start') {
      controller = await MatterTestController.start(params as ControllerSettings, (change) => channel.emitEvent('change', change));
      return undefined;
    }
    if (controller === undefined) {
      throw new Error(`The controller is not started: cannot ${method}`);
    }
    switch (method) {
      case 'commission':
        return controller.commission((params as { pairingCode: string }).pairingCode);
      case 'connect':
        return controller.connect();
      case 'endpoints':
        return controller.endpoints();
      default:
        throw new Error(`Unknown request ${method}`);
    }
  });
  let closed: Promise<void> | undefined;
  // Once: the stop signal closes it, and Homebridge's exit again.
  return { close: () => (closed ??= controller?.close() ?? Promise.resolve()) };
}

async function main(): Promise<void> {
  const order = JSON.parse(process.argv[2] ?? '') as HostOrder;
  bringUpLoopback();
  const tunnels = await openTunnels(order);
  const channel = new JsonLinesPeer(new Socket({ fd: 3, readable: true, writable: true }));
  const controller = serveController(channel);
  const { command, args, cwd, env } = order.homebridge;
  const homebridge = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
  for (const signal of STOP_SIGNALS) {
    // The controller leaves first, as a phone would: a subscription cancelled while the bridge shuts
    // down makes matter.js log a stack trace of its own.
    process.on(signal, () => {
      const closing = withTimeout(controller.close(), CONTROLLER_CLOSE_TIMEOUT_MS, 'Closing the controller');
      void closing.catch(() => undefined).then(() => homebridge.kill(signal));
    });
  }
  homebridge.once('spawn', () => channel.emitEvent('homebridge', { pid: homebridge.pid }));
  homebridge.once('error', (error) => process.stderr.write(`[private-network] ${error.message}\n`));
  homebridge.once('close', (code, signal) => {
    void Promise.allSettled([controller.close(), closeServers(tunnels)]).then(() => {
      if (signal === null) {
        process.exit(code ?? 1);
      }
      for (const stopSignal of STOP_SIGNALS) {
        process.removeAllListeners(stopSignal);
      }
      process.kill(process.pid, signal);
    });
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`[private-network] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
