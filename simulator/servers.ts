import { randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { urlHost } from './loopback.js';

export interface ListeningServer {
  readonly url: string;
  /** Closes the connections kept alive with no request under way. */
  closeIdle(): void;
  close(): Promise<void>;
}

export async function listen(host: string, port: number, handler: RequestListener): Promise<ListeningServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: boundPort } = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(host)}:${boundPort}`,
    closeIdle: () => server.closeIdleConnections(),
    // Keep-alive and half-answered sockets would hold close() open, and jest with them.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Ports below Linux's ephemeral range (32768 and up), from which every outgoing connection on the
 * machine takes its own port. A server that stops and listens again at its address (a relay restart)
 * could otherwise find its port taken by a connection made meanwhile, and a port found free could be
 * taken before its user listens on it.
 */
const QUIET_PORTS = { from: 20_000, to: 32_767 } as const;
const QUIET_PORT_ATTEMPTS = 50;

/** A random port of QUIET_PORTS. */
export function quietPort(): number {
  return randomInt(QUIET_PORTS.from, QUIET_PORTS.to + 1);
}

/** Listens on a free port of QUIET_PORTS; an ephemeral one only after every attempt found a port in use. */
export async function listenOnQuietPort(host: string, handler: RequestListener): Promise<ListeningServer> {
  for (let attempt = 0; attempt < QUIET_PORT_ATTEMPTS; attempt += 1) {
    try {
      return await listen(host, quietPort(), handler);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
        throw error;
      }
    }
  }
  return listen(host, 0, handler);
}
