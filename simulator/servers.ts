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
