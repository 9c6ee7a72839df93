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
import { ConnectionSlots } from '../../../src/push/direct/connection-slots.js';
import { DuplicateFilter } from '../../../src/push/intake.js';
import type { DoorbellNotification } from '../../../src/push/notification.js';
import { RECEIVER_BOUNDS, type ReceiverBounds } from '../../../src/push/direct/receiver.js';
import { PushReceiver } from '../../../src/push/direct/receiver.js';
import { rawPost, rawPostHead, RawConnections, type RawConnection } from '../../support/raw-connections.js';

const SECRET = randomBytes(32).toString('base64url');
const PUSH_PATH = `/push/${SECRET}`;
const MOTION = '{"device_id": 1234567, "kind": "motion", "id": "evt-1"}';

/** Shortened timings, in the same proportions as the real ones. */
const FAST: Partial<ReceiverBounds> = { headersTimeoutMs: 1_000, requestTimeoutMs: 1_500, checkIntervalMs: 100, keepAliveMs: 2_000 };

/** Room for a loaded machine: a timer fires late, never early. */
const LATE_MS = 600;
/** A connection closed to make room closes as soon as the newcomer is let in; this only bounds a failing test. */
const EVICTED_WITHIN_MS = 5_000;
/** Strangers' connections opened at once. */
const STRANGERS_AT_ONCE = 32;

const connections = new RawConnections();
const receivers: PushReceiver[] = [];
let delivered: DoorbellNotification[] = [];

afterEach(async () => {
  connections.destroyAll();
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  delivered = [];
});

async function start(bounds: Partial<ReceiverBounds> = {}): Promise<{ port: number; receiver: PushReceiver }> {
  const silent = () => undefined;
  const log = { debug: silent, info: silent, warn: silent, error: silent };
  const receiver = new PushReceiver({ host: '127.0.0.1', port: 0, secret: SECRET, log, bounds, onNotification: (n) => delivered.push(n) });
  receivers.push(receiver);
  return { port: (await receiver.start()).port, receiver };
}

async function startReceiver(bounds: Partial<ReceiverBounds> = {}): Promise<number> {
  return (await start(bounds)).port;
}

function motion(id: string): string {
  return MOTION.replace('evt-1', id);
}

/** One more delivery on a connection kept alive, answered 202. */
async function deliverOn(connection: RawConnection, id: string): Promise<void> {
  const answers = connection.statuses.length + 1;
  connection.write(rawPost(PUSH_PATH, motion(id)));
  await connection.answered(answers);
  expect(connection.statuses.at(-1)).toBe(202);
}

/** `count` connections that never send a word, as a stranger holds them. */
async function openStrangers(port: number, count: number): Promise<RawConnection[]> {
  const opened: RawConnection[] = [];
  for (let first = 0; first < count; first += STRANGERS_AT_ONCE) {
    const batch = Math.min(STRANGERS_AT_ONCE, count - first);
    opened.push(...(await Promise.all(Array.from({ length: batch }, () => connections.open(port)))));
  }
  return opened;
}

/**
 * Resolves once the receiver has taken in every connection made before: it accepts them in the
 * order they were made, so once a later one is answered, each earlier one has been let in (and
 * room made for it).
 */
async function acceptedSoFar(port: number): Promise<void> {
  const probe = await connections.open(port);
  probe.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await probe.answered();
  expect(probe.statuses).toEqual([404]);
}

/** Waits for something the receiver does in its own time, checking every few milliseconds, for at most about 10 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let check = 0; check < 2_000 && !condition(); check += 1) {
    await sleep(5);
  }
  expect(condition()).toBe(true);
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
  /** Long enough that no connection of these tests closes by a timeout: only making room closes one. */
  const PATIENT: Partial<ReceiverBounds> = { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, keepAliveMs: 60_000 };

  it('allows 256 by default', () => {
    expect(RECEIVER_BOUNDS.maxConnections).toBe(256);
  });

  it('at the limit, closes the oldest connection without complete headers first, then the one idle longest', async () => {
    const { port } = await start({ ...PATIENT, maxConnections: 3 });
    const idle = await keptAlive(port);
    const silent = await connections.open(port);
    const trickler = await connections.open(port);
    trickler.write(`POST ${PUSH_PATH} HTTP/1.1\r\nHost: x\r\n`);

    // Newcomers take the places of those still sending their headers (or nothing), the oldest first.
    const first = await connections.open(port);
    expect(await silent.closesWithin(EVICTED_WITHIN_MS)).toBe(true);
    const second = await connections.open(port);
    expect(await trickler.closesWithin(EVICTED_WITHIN_MS)).toBe(true);
    expect([idle, first, second].map((connection) => connection.isOpen)).toEqual([true, true, true]);

    // With every connection idle after a delivery, the one idle longest goes, not the oldest: `idle`
    // has just been answered again.
    await deliverOn(first, 'evt-2');
    await deliverOn(second, 'evt-3');
    await deliverOn(idle, 'evt-4');
    const third = await connections.open(port);
    expect(await first.closesWithin(EVICTED_WITHIN_MS)).toBe(true);
    expect([idle, second, third].map((connection) => connection.isOpen)).toEqual([true, true, true]);
    expect(delivered.map(({ id }) => id)).toEqual(['evt-1', 'evt-2', 'evt-3', 'evt-4']);
  });

  /**
   * Two senders whose body comes after their headers: one sends it when it likes (the test learns from
   * the receiver's count that the headers were read), one waits to be asked for it (`100 Continue`).
   */
  const bodyHeldBack: Array<{ sender: string; expectHeader: string; untilHeadersRead: (connection: RawConnection, receiver: PushReceiver) => Promise<void> }> = [
    { sender: 'a sender', expectHeader: '', untilHeadersRead: (_, receiver) => until(() => receiver.connections.delivering === 1) },
    {
      sender: 'a sender expecting 100-continue',
      expectHeader: 'Expect: 100-continue\r\n',
      untilHeadersRead: (connection) => until(() => connection.received.includes(' 100 Continue\r\n')),
    },
  ];

  it.each(bodyHeldBack)(
    'keeps a delivery from $sender, its body held back, while 256 strangers arrive, and answers it 202 once the body comes',
    async ({ expectHeader, untilHeadersRead }) => {
      const { port, receiver } = await start(PATIENT);
      const delivery = await connections.open(port);
      delivery.write(rawPostHead(PUSH_PATH, MOTION, expectHeader));
      await untilHeadersRead(delivery, receiver);

      const strangers = await openStrangers(port, RECEIVER_BOUNDS.maxConnections);
      await acceptedSoFar(port);
      delivery.write(MOTION);
      await delivery.answered(expectHeader === '' ? 1 : 2);

      expect(delivery.statuses.filter((status) => status !== 100)).toEqual([202]);
      expect(delivery.isOpen).toBe(true);
      expect(delivered).toHaveLength(1);
      // Room was made from the strangers, the oldest first.
      expect(await strangers[0]?.closesWithin(EVICTED_WITHIN_MS)).toBe(true);
    },
  );

  it.each(bodyHeldBack)(
    'keeps $sender pipelining 200 deliveries on one connection, the last body held back, while strangers fill every slot: every one 202',
    async ({ expectHeader, untilHeadersRead }) => {
      const { port, receiver } = await start(PATIENT);
      const sender = await connections.open(port);
      const ids = Array.from({ length: 200 }, (_unused, index) => `evt-${index}`);
      const lastBody = motion(ids.at(-1) ?? '');
      const pipelined = ids.slice(0, -1).map((id) => rawPost(PUSH_PATH, motion(id)));
      sender.write(pipelined.join('') + rawPostHead(PUSH_PATH, lastBody, expectHeader));
      // Every delivery but the last answered: only the last, its headers read, holds the connection now.
      await sender.answered(ids.length - 1);
      await untilHeadersRead(sender, receiver);

      await openStrangers(port, RECEIVER_BOUNDS.maxConnections + 44);
      await acceptedSoFar(port);
      sender.write(lastBody);
      await sender.answered(expectHeader === '' ? ids.length : ids.length + 1);

      expect(sender.statuses.filter((status) => status !== 100)).toEqual(ids.map(() => 202));
      expect(sender.isOpen).toBe(true);
      expect(delivered.map(({ id }) => id)).toEqual(ids);
    },
  );

  it('keeps a sender delivering one after another on one connection, idle between them, while strangers keep arriving', async () => {
    const { port } = await start(PATIENT);
    const sender = await connections.open(port);
    await openStrangers(port, RECEIVER_BOUNDS.maxConnections - 1);
    const ids = Array.from({ length: 10 }, (_unused, index) => `evt-${index}`);
    for (const id of ids) {
      await deliverOn(sender, id);
      await openStrangers(port, 16);
      await acceptedSoFar(port);
      expect(sender.isOpen).toBe(true);
    }
    expect(sender.statuses).toEqual(ids.map(() => 202));
    expect(delivered.map(({ id }) => id)).toEqual(ids);
  });
});

/**
 * Which connection makes room for a newcomer, on real loopback sockets, the slots driven directly as
 * the receiver drives them: every order of requests started and answered, without waiting on a
 * receiver to reach each one.
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

  it('makes room from a connection without complete headers first, then an idle one, never a kept one', async () => {
    const [a, b, c, d, e] = (await serverSockets(5)) as [Socket, Socket, Socket, Socket, Socket];
    const slots = new ConnectionSlots(3);
    slots.admit(a);
    slots.admit(b);
    slots.admit(c);
    slots.requestStarted(a, true);
    slots.requestEnded(a, true);
    slots.requestStarted(b, true);
    // A stranger's request does not keep its connection: it counts with those still sending headers.
    slots.requestStarted(c, false);

    slots.admit(d);
    expect([a, b, c, d].map((socket) => socket.destroyed)).toEqual([false, false, true, false]);
    slots.admit(e);
    expect([a, b, d, e].map((socket) => socket.destroyed)).toEqual([false, false, true, false]);
    expect({ size: slots.size, kept: slots.kept }).toEqual({ size: 3, kept: 1 });
  });

  it('keeps a connection until every one of its kept requests is answered, and turns a newcomer away when every slot is kept', async () => {
    const [a, b, c, d, e] = (await serverSockets(5)) as [Socket, Socket, Socket, Socket, Socket];
    const slots = new ConnectionSlots(2);
    slots.admit(a);
    slots.admit(b);
    // Two deliveries sent one behind the other: the first answered, the second still being read.
    slots.requestStarted(a, true);
    slots.requestStarted(a, true);
    slots.requestEnded(a, true);
    slots.requestStarted(b, true);

    slots.admit(c);
    expect([a, b, c].map((socket) => socket.destroyed)).toEqual([false, false, true]);
    expect({ size: slots.size, kept: slots.kept }).toEqual({ size: 2, kept: 2 });

    slots.requestEnded(b, true);
    slots.admit(d);
    expect([a, b, d].map((socket) => socket.destroyed)).toEqual([false, true, false]);

    slots.requestEnded(a, true);
    slots.admit(e);
    expect([a, d, e].map((socket) => socket.destroyed)).toEqual([false, true, false]);
    expect({ size: slots.size, kept: slots.kept }).toEqual({ size: 2, kept: 0 });
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
