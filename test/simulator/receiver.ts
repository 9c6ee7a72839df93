import type { IncomingHttpHeaders } from 'node:http';
import { listen } from '../../simulator/servers.js';

/** A tiny loopback push receiver that records what the simulator delivers. */

export interface Delivery {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  /** The push token to register: `<origin>/push/<secret>`. */
  pushToken: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

export async function startReceiver(status = 202, reply = '{"accepted":true}'): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = await listen('127.0.0.1', 0, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(status, { 'content-type': 'application/json' }).end(reply);
    });
  });
  return {
    pushToken: `${server.url}/push/receiver-secret`,
    deliveries,
    close: () => server.close(),
  };
}
