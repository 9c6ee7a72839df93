/**
 * The first process inside a private network namespace (`unshare -rn`, see private-network.ts): it
 * brings up the namespace's loopback, carries the test's TCP ports in and out through Unix sockets,
 * runs Homebridge, and hosts the Matter controller, which must share the namespace with Homebridge's
 * Matter server. It answers the test over Node's IPC channel; Homebridge's output goes straight to its
 * own stdout and stderr. It ends when Homebridge ends, with Homebridge's exit status, and passes the
 * signals that stop it on to Homebridge.
 */
import { execFileSync, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import process from 'node:process';
import type { HomebridgeCommand } from '../homebridge-process.js';
import { withTimeout } from '../timeout.js';
import { MatterTestController, type ControllerSettings, type MatterChange } from './matter-controller.js';
import { tcpToUnix, unixToTcp, type TunnelEnd } from './tunnel.js';

export interface HostOrder {
  /** `env` is added to the host's own environment. */
  homebridge: HomebridgeCommand;
  /** Servers outside that Homebridge reaches (the simulator): accepted here on loopback. */
  outbound: TunnelEnd[];
  /** Homebridge's servers that the test reaches (HAP, the push receiver): accepted outside. */
  inbound: TunnelEnd[];
}

/** What the test asks: to connect the controller, or for the endpoints it reads. */
export type HostRequest = { method: 'connect'; settings: ControllerSettings } | { method: 'endpoints' };

/** What the host tells the test: an answer, a change the controller received, Homebridge's pid. */
export type HostMessage = { id: number; result?: unknown; error?: Error } | { change: MatterChange } | { homebridgePid: number };

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

function send(message: HostMessage): void {
  if (process.connected) {
    process.send?.(message);
  }
}

/** Answers the test's requests; returns what closes the controller, once and bounded. */
function serveController(): () => Promise<void> {
  let controller: MatterTestController | undefined;
  const answer = async (request: HostRequest): Promise<unknown> => {
    if (request.method === 'connect') {
      controller = await MatterTestController.connect(request.settings, (change) => send({ change }));
      return undefined;
    }
    if (controller === undefined) {
      throw new Error(`The controller is not connected: cannot answer ${request.method}`);
    }
    return controller.endpoints();
  };
  process.on('message', (request: HostRequest & { id: number }) => {
    answer(request).then(
      (result) => send({ id: request.id, result }),
      (error: unknown) => send({ id: request.id, error: error instanceof Error ? error : new Error(String(error)) }),
    );
  });
  let closing: Promise<void> | undefined;
  return () => (closing ??= withTimeout(controller?.close() ?? Promise.resolve(), CONTROLLER_CLOSE_TIMEOUT_MS, 'Closing the controller').catch(() => undefined));
}

async function main(): Promise<void> {
  const { homebridge: hb, inbound, outbound } = JSON.parse(process.argv[2] ?? '') as HostOrder;
  bringUpLoopback();
  // The host's exit closes the tunnels; a previous run's sockets may still be there.
  await Promise.all(inbound.map(({ socket }) => rm(socket, { force: true })));
  await Promise.all([...outbound.map(tcpToUnix), ...inbound.map(unixToTcp)]);
  const closeController = serveController();
  const homebridge = spawn(hb.command, hb.args, { cwd: hb.cwd, env: { ...process.env, ...hb.env }, stdio: ['ignore', 'inherit', 'inherit'] });
  for (const signal of STOP_SIGNALS) {
    // The controller leaves first, as a phone would: a subscription cancelled while the bridge shuts
    // down makes matter.js log a stack trace of its own.
    process.on(signal, () => void closeController().then(() => homebridge.kill(signal)));
  }
  homebridge.once('spawn', () => send({ homebridgePid: homebridge.pid as number }));
  homebridge.once('error', (error) => process.stderr.write(`[private-network] ${error.message}\n`));
  homebridge.once('close', (code, signal) => {
    void closeController().then(() => {
      if (signal === null) {
        process.exit(code ?? 1);
      }
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    });
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`[private-network] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
