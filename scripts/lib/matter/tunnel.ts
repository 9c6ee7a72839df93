/**
 * TCP between two network namespaces, through a Unix socket: a path in the file system is reachable
 * from both, while each namespace has a loopback of its own. One end accepts TCP on its loopback and
 * passes each connection to the Unix socket; the other end accepts on the Unix socket and passes each
 * connection to the same port on its own loopback. Programs on either side keep their loopback
 * addresses and ports.
 */
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

const LOOPBACK = '127.0.0.1';

/** One forwarded port: the Unix socket that carries its connections between the namespaces. */
export interface TunnelEnd {
  port: number;
  socket: string;
}

/** Closes the tunnel's server and every connection still open through it. */
export type CloseTunnel = () => Promise<void>;

/** Accepts TCP on 127.0.0.1:`port` and carries every connection to the Unix socket. */
export function tcpToUnix({ port, socket }: TunnelEnd): Promise<CloseTunnel> {
  return forward({ port, host: LOOPBACK }, () => connect(socket));
}

/** Accepts on the Unix socket and carries every connection to 127.0.0.1:`port`. */
export function unixToTcp({ port, socket }: TunnelEnd): Promise<CloseTunnel> {
  return forward({ path: socket }, () => connect(port, LOOPBACK));
}

async function forward(address: { port: number; host: string } | { path: string }, connectOtherEnd: () => Socket): Promise<CloseTunnel> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    splice(client, connectOtherEnd());
  });
  server.listen(address);
  await once(server, 'listening');
  return async () => {
    const closed = once(server, 'close');
    server.close();
    // Connections still open (a controller's persistent one) would hold close() forever.
    open.forEach((connection) => connection.destroy());
    await closed;
  };
}

/** Both directions; when either side ends or fails, both are closed, as a direct connection would be. */
function splice(a: Socket, b: Socket): void {
  a.pipe(b).pipe(a);
  for (const [one, other] of [
    [a, b],
    [b, a],
  ] as const) {
    one.on('error', () => other.destroy());
    one.once('close', () => other.destroy());
  }
}
