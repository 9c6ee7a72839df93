/**
 * TCP between two network namespaces, through a Unix socket: a path in the file system is reachable
 * from both, while each namespace has a loopback of its own. One end accepts TCP on its loopback and
 * passes each connection to the Unix socket; the other end accepts on the Unix socket and passes each
 * connection to the same port on its own loopback. Programs on either side keep their loopback
 * addresses and ports.
 */
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

const LOOPBACK = '127.0.0.1';

/** One forwarded port: the Unix socket that carries its connections between the namespaces. */
export interface TunnelEnd {
  port: number;
  socket: string;
}

/** Accepts TCP on 127.0.0.1:`port` and carries every connection to the Unix socket. */
export function tcpToUnix({ port, socket }: TunnelEnd): Promise<Server> {
  return listen(createServer((client) => splice(client, connect(socket))), { port, host: LOOPBACK });
}

/** Accepts on the Unix socket and carries every connection to 127.0.0.1:`port`. */
export function unixToTcp({ port, socket }: TunnelEnd): Promise<Server> {
  return listen(createServer((client) => splice(client, connect(port, LOOPBACK))), { path: socket });
}

export async function closeServers(servers: readonly Server[]): Promise<void> {
  await Promise.all(
    servers.map(async (server) => {
      if (!server.listening) {
        return;
      }
      const closed = once(server, 'close');
      server.close();
      // Connections still open (a controller's persistent one) would hold close() forever.
      connectionsOf(server).forEach((connection) => connection.destroy());
      await closed;
    }),
  );
}

const OPEN_CONNECTIONS = new WeakMap<Server, Set<Socket>>();

function connectionsOf(server: Server): Set<Socket> {
  let connections = OPEN_CONNECTIONS.get(server);
  if (connections === undefined) {
    connections = new Set();
    OPEN_CONNECTIONS.set(server, connections);
  }
  return connections;
}

async function listen(server: Server, address: { port: number; host: string } | { path: string }): Promise<Server> {
  server.on('connection', (connection: Socket) => {
    const connections = connectionsOf(server);
    connections.add(connection);
    connection.once('close', () => connections.delete(connection));
  });
  server.listen(address);
  await once(server, 'listening');
  return server;
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
