/**
 * One run of the platform, as one Homebridge process runs it, within the soak's own process: the
 * timers it makes on the simulated clock and the client sockets it opens are its own (it runs in an
 * async context of its own, which its timers carry), so that it can end as a killed process ends.
 * Killed, its timers never fire and its sockets are closed under it, as the system closes a dead
 * process's. Node's HTTP client still tells the dead code that its sockets closed (taking that away
 * would leave Node's parsers held for ever), but whatever the dead code starts then is refused: no
 * timer fires, no socket opens, no line is logged, and no one watches its accessories any more. Nothing
 * of it is left to count after the week, and it is garbage once its sockets have closed.
 */
import { subscribe } from 'node:diagnostics_channel';
import { globalAgent } from 'node:http';
import type { Socket } from 'node:net';
import { timerScopes, type SimulatedTime, type TimerScope } from './simulated-time.js';

/** Node publishes each client socket it makes (a connect, an HTTP agent's) on this channel, as it makes it. */
const CLIENT_SOCKET = 'net.client.socket';

export class PluginProcess implements TimerScope {
  alive = true;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly time: SimulatedTime) {}

  /** Runs `work` as this process: whatever it starts, now or later, is this process's. */
  run<T>(work: () => T): T {
    return timerScopes.run(this, work);
  }

  /**
   * Timers and sockets still held after a shutdown: what it failed to let go of. A keep-alive socket
   * idle in Node's HTTP agent is the agent's to close, not the plugin's.
   */
  held(): number {
    const idle = new Set(Object.values(globalAgent.freeSockets).flat());
    return this.time.timersOf(this) + [...this.sockets].filter((socket) => !socket.destroyed && !idle.has(socket)).length;
  }

  /** Ends it as the system ends a killed process: no shutdown, its timers gone, its sockets closed. */
  kill(): void {
    this.alive = false;
    this.time.clearTimersOf(this);
    for (const socket of this.sockets) {
      socket.destroy();
    }
    this.sockets.clear();
    forgetDestroyedSockets();
  }

  private adopt(socket: Socket): void {
    if (!this.alive) {
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  static {
    subscribe(CLIENT_SOCKET, (message) => {
      const scope = timerScopes.getStore();
      if (scope instanceof PluginProcess) {
        scope.adopt((message as { socket: Socket }).socket);
      }
    });
  }
}

/**
 * A socket closed under the HTTP agent without its own listeners is still on its lists; the next
 * request would be handed it. The agent's lists are what its documentation shows, and kept here as it
 * keeps them: a name whose list is empty is removed.
 */
function forgetDestroyedSockets(): void {
  for (const pool of [globalAgent.freeSockets, globalAgent.sockets] as Array<Record<string, Socket[] | undefined>>) {
    for (const [name, sockets] of Object.entries(pool)) {
      const kept = (sockets ?? []).filter((socket) => !socket.destroyed);
      if (kept.length === 0) {
        delete pool[name];
      } else {
        pool[name] = kept;
      }
    }
  }
}
