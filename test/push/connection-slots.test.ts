/**
 * Which connection makes room for a newcomer, on real loopback sockets. A request being answered
 * lasts only as long as writing a few bytes, too short to aim a connection at from outside, so the
 * slots are driven here directly, as the receiver drives them.
 */
import { afterEach, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectionSlots } from '../../src/push/connection-slots.js';

let server: Server | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  sockets.splice(0).forEach((socket) => socket.destroy());
  if (server !== undefined) {
    server.close();
    await once(server, 'close');
    server = undefined;
  }
});

/** `count` server-side sockets of real loopback connections, in the order they connected. */
async function serverSockets(count: number): Promise<Socket[]> {
  const accepted: Socket[] = [];
  server = createServer((socket) => accepted.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  for (let index = 0; index < count; index += 1) {
    const client = connect(port, '127.0.0.1');
    client.on('error', () => undefined);
    sockets.push(client);
    await once(client, 'connect');
    while (accepted.length <= index) {
      await sleep(1);
    }
  }
  sockets.push(...accepted);
  return accepted;
}

it('makes room by closing the oldest connection not being answered, and turns a newcomer away when every one is', async () => {
  const [a, b, c, d, e] = (await serverSockets(5)) as [Socket, Socket, Socket, Socket, Socket];
  const slots = new ConnectionSlots(2);
  slots.admit(a);
  slots.admit(b);
  slots.answering(a);

  slots.admit(c);
  expect([a, b, c].map((socket) => socket.destroyed)).toEqual([false, true, false]);

  slots.answering(c);
  slots.admit(d);
  expect([a, c, d].map((socket) => socket.destroyed)).toEqual([false, false, true]);
  expect(slots.size).toBe(2);

  slots.answered(a);
  slots.admit(e);
  expect([a, c, e].map((socket) => socket.destroyed)).toEqual([true, false, false]);
  expect(slots.size).toBe(2);
});

it('frees the slot of a connection that closed by itself', async () => {
  const [a, b, c] = (await serverSockets(3)) as [Socket, Socket, Socket];
  const slots = new ConnectionSlots(2);
  slots.admit(a);
  slots.admit(b);
  a.destroy();
  await once(a, 'close');

  slots.admit(c);
  expect([b, c].map((socket) => socket.destroyed)).toEqual([false, false]);
  expect(slots.size).toBe(2);
});

it('refuses a limit that is not a positive integer', () => {
  for (const limit of [0, -1, 1.5, Number.NaN]) {
    expect(() => new ConnectionSlots(limit)).toThrow(`A connection limit must be a positive integer, not ${limit}`);
  }
});
