import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { connect, createServer as createTcpServer } from 'node:net';
import type { Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DuplicateFilter } from '../../../src/push/intake.js';
import type { Logger } from '../../../src/log.js';
import type { DoorbellNotification } from '../../../src/push/notification.js';
import { MAX_BODY_BYTES } from '../../../src/push/intake.js';
import { PushReceiver } from '../../../src/push/direct/receiver.js';

const HOST = '127.0.0.1';
const SECRET = randomBytes(32).toString('base64url');
const PUSH_PATH = `/push/${SECRET}`;
const JSON_TYPE = { 'content-type': 'application/json' };
const TEN_MINUTES_MS = 10 * 60 * 1000;
const MOTION = '{"device_id": 1234567, "kind": "motion"}';

/** Every line logged by any receiver in this file, to prove at the end that none holds the secret. */
const allLogLines: string[] = [];

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Exchange {
  method?: string;
  path?: string;
  headers?: OutgoingHttpHeaders;
  /** Sent with a Content-Length unless `chunked`. */
  body?: string | Buffer;
  chunked?: boolean;
  agent?: Agent;
}

function send(port: number, exchange: Exchange = {}): Promise<Reply> {
  const { method = 'POST', path = PUSH_PATH, headers = JSON_TYPE, body, chunked = false, agent } = exchange;
  return new Promise((resolve, reject) => {
    const req = request({ host: HOST, port, method, path, headers, agent: agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() });
      });
    });
    req.on('error', reject);
    if (body !== undefined && !chunked) {
      req.setHeader('content-length', Buffer.byteLength(body));
    }
    req.end(body);
  });
}

/** The head of a JSON POST written by hand, so that Content-Length can disagree with the body. */
function rawHead(path: string, contentLength: number): string {
  const headers = `Host: x\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}`;
  return `POST ${path} HTTP/1.1\r\n${headers}\r\n\r\n`;
}

/** Resolves when the socket is closed, however: a reset by the server is an expected way to end. */
function closed(socket: Socket): Promise<void> {
  socket.on('error', () => undefined);
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/** Raw client connections, destroyed after each test so that a failing test cannot keep the server open. */
const rawSockets = new Set<Socket>();

async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, HOST);
  rawSockets.add(socket);
  socket.once('close', () => rawSockets.delete(socket));
  await once(socket, 'connect');
  return socket;
}

/** Writes exact bytes on a fresh connection, half-closes it and returns everything the server sent. */
async function sendRaw(port: number, bytes: string | Buffer): Promise<string> {
  const socket = await openSocket(port);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const socketClosed = closed(socket);
  socket.end(bytes);
  await socketClosed;
  return Buffer.concat(chunks).toString();
}

/** A valid notification padded with spaces to exactly `size` bytes. */
function paddedBody(size: number): string {
  return MOTION.padEnd(size, ' ');
}

/** A receiver for lifecycle tests that need a second one; its notifications are not looked at. */
function otherReceiver(port: number, lines: string[] = []): PushReceiver {
  const log = recordingLogger(lines);
  return new PushReceiver({ host: HOST, port, secret: SECRET, log, onNotification: () => undefined });
}

/** Proves a port is free by listening on it again. */
async function expectPortFree(port: number): Promise<void> {
  const successor = otherReceiver(port);
  expect(await successor.start()).toEqual({ host: HOST, port });
  await successor.close();
}

function recordingLogger(lines: string[]): Logger {
  const record = (level: string) => (message: string) => {
    lines.push(`${level} ${message}`);
    allLogLines.push(message);
  };
  return { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}

afterAll(() => {
  expect(allLogLines.length).toBeGreaterThan(0);
  expect(allLogLines.filter((line) => line.includes(SECRET))).toEqual([]);
});

describe('PushReceiver', () => {
  let receiver: PushReceiver;
  let port: number;
  let delivered: DoorbellNotification[];
  let logLines: string[];
  let clock: number;
  let onNotification: (notification: DoorbellNotification) => void;

  beforeEach(async () => {
    delivered = [];
    logLines = [];
    clock = 1_700_000_000_000;
    onNotification = (notification) => delivered.push(notification);
    receiver = new PushReceiver({
      host: HOST,
      port: 0,
      secret: SECRET,
      log: recordingLogger(logLines),
      onNotification: (notification) => onNotification(notification),
      now: () => clock,
    });
    ({ port } = await receiver.start());
  });

  afterEach(async () => {
    for (const socket of rawSockets) {
      socket.destroy();
    }
    await receiver.close();
  });

  describe('path and secret (404)', () => {
    it('answers 404 to other paths and wrong secrets, whatever the method', async () => {
      const paths = ['/', '/push', '/push/', `/push/${SECRET}/`, `/push/${SECRET}x`, `/push/${SECRET.slice(0, -1)}`];
      paths.push(`/other/${SECRET}`, `/PUSH/${SECRET}`);
      for (const path of paths) {
        expect((await send(port, { path, body: MOTION })).status).toBe(404);
      }
      expect((await send(port, { method: 'GET', path: '/push/wrong' })).status).toBe(404);
      expect(delivered).toEqual([]);
    });

    it('answers 404 to malformed percent-encoding without failing', async () => {
      expect((await send(port, { path: '/push/%E0%A4%A', body: MOTION })).status).toBe(404);
      expect((await send(port, { path: `/push/%${SECRET}`, body: MOTION })).status).toBe(404);
    });

    it('ignores a query string after the secret', async () => {
      expect((await send(port, { path: `${PUSH_PATH}?source=test`, body: MOTION })).status).toBe(202);
    });

    it('never echoes the request in the response', async () => {
      const reply = await send(port, { path: `/push/${SECRET}x`, body: MOTION });
      expect(reply.body).toBe('Not Found\n');
      const accepted = await send(port, { body: MOTION });
      expect(accepted.body).toBe('Accepted\n');
      expect(accepted.body).not.toContain(SECRET);
    });
  });

  describe('method (405)', () => {
    it('answers 405 with Allow: POST to any other method on the right path', async () => {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const reply = await send(port, { method, body: MOTION });
        expect(reply.status).toBe(405);
        expect(reply.headers.allow).toBe('POST');
      }
      expect((await send(port, { method: 'HEAD' })).status).toBe(405);
      expect(delivered).toEqual([]);
    });
  });

  describe('content type (415)', () => {
    it('answers 415 to other and missing content types', async () => {
      for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/jsonx' }, {}]) {
        expect((await send(port, { headers, body: MOTION })).status).toBe(415);
      }
      expect(delivered).toEqual([]);
    });

    it('accepts parameters and any letter case', async () => {
      const contentTypes = ['application/json; charset=utf-8', 'Application/JSON', ' application/json ;charset=UTF-8'];
      for (const contentType of contentTypes) {
        expect((await send(port, { headers: { 'content-type': contentType }, body: MOTION })).status).toBe(202);
      }
    });
  });

  describe('size (413)', () => {
    it('accepts exactly 16,384 bytes and refuses 16,385, with and without Content-Length', async () => {
      expect(MAX_BODY_BYTES).toBe(16_384);
      for (const chunked of [false, true]) {
        expect((await send(port, { body: paddedBody(16_384), chunked })).status).toBe(202);
        expect((await send(port, { body: paddedBody(16_385), chunked })).status).toBe(413);
      }
      expect(delivered).toHaveLength(2);
    });

    it('answers a declared oversized body at once, before any of it is sent', async () => {
      const socket = await openSocket(port);
      socket.write(rawHead(PUSH_PATH, 1_000_000));
      const [answer] = (await once(socket, 'data')) as [Buffer];
      expect(answer.toString()).toMatch(/^HTTP\/1\.1 413 /);
      socket.destroy();
    });

    it('answers an endless chunked body with 413 while the client is still sending', async () => {
      const chunk = Buffer.alloc(16 * 1024, 'x');
      let status: number | undefined;
      const req = request({ host: HOST, port, method: 'POST', path: PUSH_PATH, headers: JSON_TYPE, agent: false });
      req.on('response', (res) => {
        status = res.statusCode;
        res.resume();
      });
      req.on('error', () => undefined); // the server closes the connection on us: expected
      let written = 0;
      // Bounded so that a receiver that reads on for ever fails the test instead of hanging it.
      while (status === undefined && !req.destroyed && written < 256 * 1024 * 1024) {
        req.write(chunk);
        written += chunk.length;
        await nextTurn();
      }
      req.destroy();
      expect(status).toBe(413);
    });

    it('stays consistent when Content-Length lies', async () => {
      // Shorter than the body: the rest is parsed as a next request, which is garbage.
      const short = await sendRaw(port, rawHead(PUSH_PATH, 10) + MOTION);
      expect(short).toMatch(/^HTTP\/1\.1 400 /);
      // Longer than the body, then the client gives up: nothing to deliver, nothing to crash.
      await sendRaw(port, rawHead(PUSH_PATH, 500) + MOTION);
      expect(delivered).toEqual([]);
      expect((await send(port, { body: MOTION })).status).toBe(202);
    });
  });

  describe('JSON and notification (400)', () => {
    it('answers 400 to invalid JSON, non-objects, bad fields and invalid UTF-8', async () => {
      const bodies: Array<string | Buffer> = [
        '{"device_id": 1234567, "kind": "motion"',
        '',
        '[]',
        '1234567',
        '{"device_id": 1234567}',
        '{"kind": "motion"}',
        '{"device_id": 1234567.0, "kind": "motion"}',
        '{"device_id": 1234567, "kind": "motion", "id": 1.5}',
        '{"device_id": 1234567, "kind": "motion", "id": null}',
        Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      ];
      for (const body of bodies) {
        expect((await send(port, { body })).status).toBe(400);
      }
      expect(delivered).toEqual([]);
    });
  });

  describe('accepted (202)', () => {
    it('delivers both shapes', async () => {
      const flat = '{"device_id": 1234567, "kind": "motion", "id": "evt-1", "created_at": "2026-11-22T10:00:00Z"}';
      const nested = '{"ding": {"doorbot_id": 7654321, "kind": "motion", "id": 6975233002112450000}}';
      expect((await send(port, { body: flat })).status).toBe(202);
      expect((await send(port, { body: nested })).status).toBe(202);
      expect(delivered).toEqual([
        { deviceId: '1234567', kind: 'motion', id: 'evt-1' },
        { deviceId: '7654321', kind: 'motion', id: '6975233002112450000' },
      ]);
    });

    it('keeps ids above 2^53 exact', async () => {
      await send(port, { body: '{"device_id": 9007199254740993, "kind": "motion", "id": 9007199254740993}' });
      expect(delivered).toEqual([{ deviceId: '9007199254740993', kind: 'motion', id: '9007199254740993' }]);
    });

    it('delivers every kind, not only motion', async () => {
      await send(port, { body: '{"device_id": 1, "kind": "ding"}' });
      await send(port, { body: '{"device_id": 1, "subtype": "on_demand"}' });
      expect(delivered.map((notification) => notification.kind)).toEqual(['ding', 'on_demand']);
    });

    it('answers 202 and keeps serving when onNotification throws', async () => {
      onNotification = () => {
        throw new Error('platform bug');
      };
      expect((await send(port, { body: MOTION })).status).toBe(202);
      expect(logLines.some((line) => line.startsWith('warn') && line.includes('platform bug'))).toBe(true);
      onNotification = (notification) => delivered.push(notification);
      expect((await send(port, { body: MOTION })).status).toBe(202);
      expect(delivered).toHaveLength(1);
    });
  });

  describe('duplicates', () => {
    const withId = (id: string, deviceId = '1234567') => `{"device_id": ${deviceId}, "kind": "motion", "id": ${id}}`;

    it('drops the same doorbell and id, "7" and 7 alike, but still answers 202', async () => {
      expect((await send(port, { body: withId('"7"') })).status).toBe(202);
      expect((await send(port, { body: withId('7') })).status).toBe(202);
      const nested = '{"ding": {"doorbot_id": "1234567", "kind": "motion", "id": 7}}';
      expect((await send(port, { body: nested })).status).toBe(202);
      expect(delivered).toHaveLength(1);
    });

    it('keeps the same id from another doorbell, and notifications without an id', async () => {
      await send(port, { body: withId('7') });
      await send(port, { body: withId('7', '7654321') });
      await send(port, { body: MOTION });
      await send(port, { body: MOTION });
      const deviceIds = delivered.map((notification) => notification.deviceId);
      expect(deviceIds).toEqual(['1234567', '7654321', '1234567', '1234567']);
    });

    it('drops a repeat within 10 minutes of the first delivery and accepts it after', async () => {
      await send(port, { body: withId('"evt-1"') });
      clock += TEN_MINUTES_MS - 1;
      await send(port, { body: withId('"evt-1"') });
      expect(delivered).toHaveLength(1);
      clock += 1;
      await send(port, { body: withId('"evt-1"') });
      expect(delivered).toHaveLength(2);
    });
  });

  describe('robustness', () => {
    it('survives a client that aborts mid-body', async () => {
      const socket = await openSocket(port);
      socket.write(`${rawHead(PUSH_PATH, 100)}{"device_`);
      await nextTurn();
      const socketClosed = closed(socket);
      socket.destroy();
      await socketClosed;
      expect((await send(port, { body: MOTION })).status).toBe(202);
      expect(delivered).toHaveLength(1);
    });

    it('closes the connection after a rejection instead of draining a body it never reads', async () => {
      const socket = await openSocket(port);
      const socketClosed = closed(socket);
      const answer = once(socket, 'data') as Promise<[Buffer]>;
      socket.write(rawHead('/wrong', 100_000_000));
      expect((await answer)[0].toString()).toMatch(/^HTTP\/1\.1 404 [^]*\r\nConnection: close\r\n/i);
      await socketClosed;
    });

    it('survives huge headers', async () => {
      const head = `POST ${PUSH_PATH} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`;
      const reply = await sendRaw(port, head);
      expect(reply).toMatch(/^HTTP\/1\.1 431 /);
      expect((await send(port, { body: MOTION })).status).toBe(202);
    });
  });

  describe('logging', () => {
    it('logs one debug line per request with method and status, without the secret or the body', async () => {
      await send(port, { body: '{"device_id": 1234567, "kind": "motion", "note": "body-marker"}' });
      await send(port, { method: 'GET', path: '/push/not-the-secret' });
      await send(port, { path: `/prefix/push/${SECRET}`, body: MOTION });
      expect(logLines).toEqual([
        expect.stringMatching(/^debug Push POST "\/push\/\*\*\*" -> 202 /),
        expect.stringMatching(/^debug Push GET "\/push\/\*\*\*" -> 404 /),
        expect.stringMatching(/^debug Push POST "\/prefix\/push\/\*\*\*" -> 404 /),
      ]);
      expect(logLines.join('\n')).not.toContain('body-marker');
    });

    it('logs nothing above debug for a flood of bad requests', async () => {
      for (let request = 0; request < 20; request += 1) {
        await send(port, { path: `/wp-admin/${request}` });
        await send(port, { body: 'not json' });
      }
      expect(logLines.filter((line) => !line.startsWith('debug'))).toEqual([]);
    });
  });

  describe('lifecycle', () => {
    it('reports the ephemeral port it bound', () => {
      expect(port).toBeGreaterThan(0);
    });

    it('frees the port at once on close, even with an idle keep-alive connection open', async () => {
      const agent = new Agent({ keepAlive: true });
      expect((await send(port, { body: MOTION, agent })).status).toBe(202);
      const [idleSocket] = Object.values(agent.freeSockets).flat();
      expect(idleSocket).toBeDefined();
      const socketClosed = closed(idleSocket as Socket);
      await receiver.close();
      await socketClosed;
      agent.destroy();
      await expectPortFree(port);
    });

    it('frees the port at once with a request still sending its body', async () => {
      const socket = await openSocket(port);
      const socketClosed = closed(socket);
      socket.write(`${rawHead(PUSH_PATH, 100)}{`);
      await nextTurn();
      await receiver.close();
      await socketClosed;
      await expectPortFree(port);
    });

    it('closes idempotently, and closing a receiver never started does nothing', async () => {
      await Promise.all([receiver.close(), receiver.close()]);
      await receiver.close();
      await expect(otherReceiver(0).close()).resolves.toBeUndefined();
    });

    it('rejects with a clear error and warns once when the port is taken', async () => {
      const occupant = createTcpServer();
      occupant.listen(0, HOST);
      await once(occupant, 'listening');
      const takenPort = (occupant.address() as { port: number }).port;
      const lines: string[] = [];
      const blocked = otherReceiver(takenPort, lines);
      try {
        const failure = blocked.start();
        const message = `Push receiver cannot listen on ${HOST}:${takenPort}: the port is already in use`;
        await expect(failure).rejects.toThrow(message);
        expect(lines).toEqual([expect.stringMatching(new RegExp(`^warn .*port ${takenPort}.*already in use`))]);
        await expect(failure.catch((error: unknown) => String(error))).resolves.not.toContain(SECRET);
      } finally {
        await blocked.close();
        occupant.close();
        await once(occupant, 'close');
      }
    });

    it('refuses a second start', async () => {
      await expect(receiver.start()).rejects.toThrow('Push receiver can only be started once');
    });

    it('refuses a secret that is not 32 random bytes in base64url, as push.json holds', () => {
      const options = { host: HOST, port: 0, log: recordingLogger([]), onNotification: () => undefined };
      const message = 'Push receiver secret must be 43 base64url characters (32 random bytes)';
      for (const secret of ['', 'short-enough-to-guess', `${SECRET.slice(0, 42)}=`, `${SECRET}A`]) {
        expect(() => new PushReceiver({ ...options, secret })).toThrow(message);
      }
      expect(() => new PushReceiver({ ...options, secret: SECRET })).not.toThrow();
    });
  });
});

describe('DuplicateFilter', () => {
  it('remembers at most 1,000 ids, forgetting the oldest first', () => {
    const filter = new DuplicateFilter({ now: () => 0 });
    for (let id = 0; id <= 1000; id += 1) {
      expect(filter.isDuplicate('1', String(id))).toBe(false);
    }
    expect(filter.isDuplicate('1', '1')).toBe(true);
    expect(filter.isDuplicate('1', '1000')).toBe(true);
    // Id 0 was evicted by id 1000, so it counts as fresh (and now evicts id 1).
    expect(filter.isDuplicate('1', '0')).toBe(false);
    expect(filter.isDuplicate('1', '1')).toBe(false);
  });

  it('purges expired ids, so they do not count against the bound', () => {
    let clock = 0;
    const filter = new DuplicateFilter({ now: () => clock });
    for (let id = 0; id < 1000; id += 1) {
      filter.isDuplicate('1', String(id));
    }
    clock += TEN_MINUTES_MS;
    expect(filter.isDuplicate('1', 'fresh')).toBe(false);
    for (let id = 0; id < 999; id += 1) {
      expect(filter.isDuplicate('1', `new-${id}`)).toBe(false);
    }
    // 1,000 live ids: had the expired ones still counted, 'fresh' would have been evicted long ago.
    expect(filter.isDuplicate('1', 'fresh')).toBe(true);
  });

  it('never treats a notification without an id as a duplicate, nor remembers it', () => {
    const filter = new DuplicateFilter({ now: () => 0 });
    for (let id = 0; id < 1000; id += 1) {
      filter.isDuplicate('1', String(id));
    }
    expect(filter.isDuplicate('1', undefined)).toBe(false);
    expect(filter.isDuplicate('1', undefined)).toBe(false);
    // Remembering it would have evicted id 0.
    expect(filter.isDuplicate('1', '0')).toBe(true);
  });
});
