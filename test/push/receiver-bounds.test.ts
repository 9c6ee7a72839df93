/**
 * What a stranger can hold of the push receiver, over real loopback connections: how long a
 * connection lives without a complete request or between requests, how big its headers may be, how
 * many connections are open at once and which one makes room for a newcomer, and which answers close
 * their connection. Most tests run on shortened timings; one runs on the real ones.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectionSlots } from '../../src/push/connection-slots.js';
import { DuplicateFilter } from '../../src/push/duplicate-filter.js';
import type { DoorbellNotification } from '../../src/push/notification.js';
import { RECEIVER_BOUNDS, type ReceiverBounds } from '../../src/push/receiver-bounds.js';
import { PushReceiver } from '../../src/push/receiver.js';
import { rawPost, rawPostHead, RawConnections, type RawConnection } from '../support/raw-connections.js';

const SECRET = randomBytes(32).toString('base64url');
const PUSH_PATH = `/push/${SECRET}`;
const MOTION = '{"device_id": 1234567, "kind": "motion", "id": "evt-1"}';

/** Shortened timings, in the same proportions as the real ones. */
const FAST: Partial<ReceiverBounds> = { headersTimeoutMs: 1_000, requestTimeoutMs: 1_500, checkIntervalMs: 100, keepAliveMs: 2_000 };

/** Room for a loaded machine: a timer fires late, never early. */
const LATE_MS = 600;

const connections = new RawConnections();
const receivers: PushReceiver[] = [];
let delivered: DoorbellNotification[] = [];

afterEach(async () => {
  connections.destroyAll();
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  delivered = [];
});

async function startReceiver(bounds: Partial<ReceiverBounds> = {}): Promise<number> {
  const silent = () => undefined;
  const log = { debug: silent, info: silent, warn: silent, error: silent };
  const receiver = new PushReceiver({ host: '127.0.0.1', port: 0, secret: SECRET, log, bounds, onNotification: (n) => delivered.push(n) });
  receivers.push(receiver);
  return (await receiver.start()).port;
}

/** A connection that has delivered a notification, got its 202, and is kept open: idle between requests. */
async function keptAlive(port: number): Promise<RawConnection> {
  const connection = await connections.open(port);
  connection.write(rawPost(PUSH_PATH, MOTION));
  await connection.answered();
  expect(connection.statuses).toEqual([202]);
  return connection;
}

/** Its lifetime, once closed, lies within [from, to] ms, measured from `since` (default: when it opened). */
async function expectClosedBetween(connection: RawConnection, from: number, to: number, since = connection.openedAt): Promise<void> {
  expect(await connection.closesWithin(to + LATE_MS - (performance.now() - since))).toBe(true);
  const lived = (connection.closedAt ?? 0) - since;
  expect(lived).toBeGreaterThanOrEqual(from);
  expect(lived).toBeLessThanOrEqual(to + LATE_MS);
}

describe('timeouts', () => {
  it('closes a connection that never sends a word once the headers time is up', async () => {
    const port = await startReceiver(FAST);
    const silent = await connections.open(port);
    await expectClosedBetween(silent, 1_000, 1_100);
    expect(silent.statuses).toEqual([408]);
  });

  it('cuts a client trickling its headers at the headers time, though it never stops sending', async () => {
    const port = await startReceiver(FAST);
    const trickler = await connections.open(port);
    trickler.write(`POST ${PUSH_PATH} HTTP/1.1\r\nHost: x\r\nX-Slow: `);
    trickler.trickle('a'.repeat(100), 50);
    await expectClosedBetween(trickler, 1_000, 1_100);
  });

  it('cuts a client trickling its body at the request time, though its headers came at once', async () => {
    const port = await startReceiver(FAST);
    const trickler = await connections.open(port);
    const body = MOTION.padEnd(200, ' ');
    trickler.write(rawPostHead(PUSH_PATH, body));
    trickler.trickle(body, 50);
    await expectClosedBetween(trickler, 1_500, 1_600);
    expect(delivered).toEqual([]);
  });

  it('closes a keep-alive connection idle for the keep-alive time after its 202, having told the client less', async () => {
    const port = await startReceiver(FAST);
    const idle = await keptAlive(port);
    const answeredAt = performance.now();
    expect(idle.received).toMatch(/\r\nKeep-Alive: timeout=1\r\n/i);
    // Never before the time the client was told (1 s), at most the keep-alive time after the answer.
    await expectClosedBetween(idle, 1_000, 2_000, answeredAt);
  });

  it(
    'holds the real bounds: idle keep-alive 5 s, headers 10 s, the whole request 15 s, checked every second',
    async () => {
      const port = await startReceiver();
      const idle = await keptAlive(port);
      const answeredAt = performance.now();
      const silent = await connections.open(port);
      const headerTrickler = await connections.open(port);
      headerTrickler.write(`POST ${PUSH_PATH} HTTP/1.1\r\nHost: x\r\nX-Slow: `);
      headerTrickler.trickle('a'.repeat(100), 400);
      const bodyTrickler = await connections.open(port);
      const body = MOTION.padEnd(200, ' ');
      bodyTrickler.write(rawPostHead(PUSH_PATH, body));
      bodyTrickler.trickle(body, 400);

      await Promise.all([
        expectClosedBetween(idle, 4_000, 5_000, answeredAt),
        expectClosedBetween(silent, 10_000, 11_000),
        expectClosedBetween(headerTrickler, 10_000, 11_000),
        expectClosedBetween(bodyTrickler, 15_000, 16_000),
      ]);
      expect(delivered).toHaveLength(1);
    },
    25_000,
  );
});

describe('header size', () => {
  it('takes headers of just under 8 KiB and answers 431 to more', async () => {
    const port = await startReceiver();
    const under = await connections.open(port);
    under.write(rawPost(PUSH_PATH, MOTION, `X-Pad: ${'a'.repeat(7_900)}\r\n`));
    await under.answered();
    const over = await connections.open(port);
    over.write(rawPost(PUSH_PATH, MOTION, `X-Pad: ${'a'.repeat(8_200)}\r\n`));
    await over.answered();

    expect([under.statuses, over.statuses]).toEqual([[202], [431]]);
    await over.closed;
  });
});

describe('answers', () => {
  it('closes the connection after every answer but 202', async () => {
    const port = await startReceiver();
    // Heads only where the receiver answers before reading the body: a body it never reads would
    // make closing the connection a reset, which can lose the answer on its way.
    const requests: Array<[number, string]> = [
      [404, rawPostHead(`/push/${'x'.repeat(43)}`, MOTION)],
      [405, `GET ${PUSH_PATH} HTTP/1.1\r\nHost: x\r\n\r\n`],
      [415, rawPostHead(PUSH_PATH, MOTION, '', 'text/plain')],
      [413, rawPostHead(PUSH_PATH, MOTION.padEnd(16_385, ' '))],
      [400, rawPost(PUSH_PATH, '{"device_id": 1234567}')],
      // Node's own answer to an expectation it does not know (417) would keep the connection open.
      [404, rawPostHead('/elsewhere', MOTION, 'Expect: something-else\r\n')],
    ];
    for (const [status, request] of requests) {
      const connection = await connections.open(port);
      connection.write(request);
      await connection.answered();
      const closed = await connection.closesWithin(1_000);
      expect({ request: request.split('\r\n', 1)[0], statuses: connection.statuses, closed }).toEqual({
        request: request.split('\r\n', 1)[0],
        statuses: [status],
        closed: true,
      });
      expect(connection.received).toMatch(/\r\nConnection: close\r\n/i);
    }
  });

  it('keeps the connection after a 202 for the next delivery', async () => {
    const port = await startReceiver();
    const connection = await keptAlive(port);
    connection.write(rawPost(PUSH_PATH, MOTION.replace('evt-1', 'evt-2')));
    await connection.answered(2);
    expect(connection.statuses).toEqual([202, 202]);
    expect(connection.isOpen).toBe(true);
    expect(delivered.map(({ id }) => id)).toEqual(['evt-1', 'evt-2']);
  });
});

describe('connections at once', () => {
  it('allows 256 by default', () => {
    expect(RECEIVER_BOUNDS.maxConnections).toBe(256);
  });

  it('at the limit, closes the oldest idle or incomplete connection for a newcomer, and a delivery gets its 202', async () => {
    const port = await startReceiver({ maxConnections: 4 });
    const idle = await keptAlive(port);
    const silent = await connections.open(port);
    const trickler = await connections.open(port);
    trickler.write(`POST ${PUSH_PATH} HTTP/1.1\r\nHost: x\r\n`);
    const late = await connections.open(port);

    const newcomer = await connections.open(port);
    await idle.closesWithin(1_000);
    await sleep(50);
    expect([idle, silent, trickler, late, newcomer].map((connection) => connection.isOpen)).toEqual([false, true, true, true, true]);

    const delivery = await connections.open(port);
    delivery.write(rawPost(PUSH_PATH, MOTION.replace('evt-1', 'evt-2')));
    await delivery.answered();
    expect(delivery.statuses).toEqual([202]);
    await silent.closesWithin(1_000);
    expect([silent, trickler, late, newcomer, delivery].map((connection) => connection.isOpen)).toEqual([false, true, true, true, true]);
  });
});

/**
 * Which connection makes room for a newcomer, on real loopback sockets. A request being answered
 * lasts only as long as writing a few bytes, too short to aim a connection at from outside, so the
 * slots are driven here directly, as the receiver drives them.
 */
describe('ConnectionSlots', () => {
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
});

/**
 * The duplicate filter's window is a duration, measured on a monotonic clock: a step of the system
 * clock (NTP, a user setting it) does not forget recent ids.
 */
describe('DuplicateFilter', () => {
  const realNow = Date.now;
  /** How far the system clock has been stepped, read by the stand-in for Date.now. */
  let stepMs = 0;

  afterEach(() => {
    jest.restoreAllMocks();
    stepMs = 0;
  });

  describe('DuplicateFilter with its own clock', () => {
    it('still drops a repeated id after the system clock stepped forward 11 minutes', () => {
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + stepMs);
      const filter = new DuplicateFilter();
      expect(filter.isDuplicate('1234567', 'evt-1')).toBe(false);

      stepMs = 11 * 60_000;
      expect(filter.isDuplicate('1234567', 'evt-1')).toBe(true);
      expect(filter.isDuplicate('1234567', 'evt-2')).toBe(false);
    });
  });
});
