/**
 * The push receiver over real HTTP with generated and mutated requests (fast-check): only the
 * documented statuses, in the documented order of checks, never a crash, and never a notification
 * handed on from a request it refused.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import type { DoorbellNotification } from '../../src/push/notification.js';
import { MAX_BODY_BYTES, PushReceiver } from '../../src/push/receiver.js';
import { createTestLogger } from '../support/homebridge-api.js';
import { propertyRuns } from '../support/property-runs.js';

const HOST = '127.0.0.1';
const SECRET = randomBytes(32).toString('base64url');
const PUSH_PATH = `/push/${SECRET}`;

interface Exchange {
  method: string;
  path: string;
  contentType: string | undefined;
  body: Buffer;
  chunked: boolean;
  /** The notification the body holds, when the generator made a valid one. */
  expected?: { deviceId: string };
}

let receiver: PushReceiver;
let port: number;
const delivered: DoorbellNotification[] = [];
const log = createTestLogger();
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  receiver = new PushReceiver({ host: HOST, port: 0, secret: SECRET, log, onNotification: (notification) => delivered.push(notification) });
  ({ port } = await receiver.start());
});

afterAll(async () => {
  agent.destroy();
  await receiver.close();
});

function send({ method, path, contentType, body, chunked }: Exchange): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
    const outgoing = request({ host: HOST, port, method, path, headers, agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', reject);
    if (!chunked) {
      outgoing.setHeader('content-length', body.length);
    }
    outgoing.end(body);
  });
}

/** The documented order: path and secret, method, content type, size, then JSON and shape. */
function expectedStatuses({ method, path, contentType, body, expected }: Exchange): number[] {
  if (path.split('?')[0] !== PUSH_PATH) {
    return [404];
  }
  if (method !== 'POST') {
    return [405];
  }
  if (!/^application\/json\s*(;|$)/i.test(contentType ?? '')) {
    return [415];
  }
  if (body.length > MAX_BODY_BYTES) {
    return [413];
  }
  return expected === undefined ? [202, 400] : [202];
}

const deviceId = fc.bigInt({ min: 1n, max: 9223372036854775807n }).map(String);
/** Mostly small bodies; some padded to one byte under, at or over the size limit. */
const size = fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: MAX_BODY_BYTES - 1, max: MAX_BODY_BYTES + 1 }) });
const validBody = fc.tuple(deviceId, fc.uuid(), fc.constantFrom('flat', 'nested', 'service'), size).map(([id, eventId, shape, length]) => {
  const text =
    shape === 'flat'
      ? `{"device_id": ${id}, "kind": "motion", "id": "${eventId}"}`
      : shape === 'nested'
        ? `{"ding": {"doorbot_id": "${id}", "kind": "ding", "id": "${eventId}"}}`
        : `{"android_config": {"category": "a.b.motion"}, "data": {"device": {"id": ${id}}, "event": {"ding": {"id": "${eventId}"}}}}`;
  // Spaces keep it valid JSON while it reaches and passes the size limit.
  return { body: Buffer.from(text.padEnd(length, ' ')), expected: { deviceId: id } };
});
const mutatedBody = fc.tuple(validBody, fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.nat()).map(([{ body }, junk, at]) => {
  const cut = at % (body.length + 1);
  return { body: Buffer.concat([body.subarray(0, cut), Buffer.from(junk), body.subarray(cut)]), expected: undefined };
});
const anyBody = fc.oneof(
  { weight: 3, arbitrary: validBody },
  { weight: 3, arbitrary: mutatedBody },
  { weight: 1, arbitrary: fc.jsonValue().map((value) => ({ body: Buffer.from(JSON.stringify(value) ?? ''), expected: undefined })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ body: Buffer.from(bytes), expected: undefined })) },
);
const pathChars = fc.constantFrom(...'abcXYZ019-._~!$&\'()*+,;=:@/%');
const path = fc.oneof(
  { weight: 6, arbitrary: fc.constant(PUSH_PATH) },
  { weight: 1, arbitrary: fc.string({ unit: pathChars, maxLength: 8 }).map((tail) => `${PUSH_PATH}${tail}`) },
  { weight: 1, arbitrary: fc.string({ unit: pathChars, maxLength: 80 }).map((tail) => `/push/${tail}`) },
  { weight: 1, arbitrary: fc.string({ unit: pathChars, maxLength: 80 }).map((tail) => `/${tail}`) },
);
const exchange: fc.Arbitrary<Exchange> = fc
  .record({
    method: fc.oneof({ weight: 8, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') }),
    path,
    contentType: fc.constantFrom('application/json', 'application/json', 'Application/JSON; charset=utf-8', 'text/plain', 'application/jsonx', undefined),
    payload: anyBody,
    chunked: fc.boolean(),
  })
  // Node's client sends a body of a GET or DELETE without framing (a malformed request): only POST is chunked.
  .map(({ payload, chunked, ...rest }) => ({ ...rest, ...payload, chunked: chunked && rest.method === 'POST' }));

describe('PushReceiver, for any request', () => {
  it('answers only the documented statuses in the documented order, and hands on only what it accepted', async () => {
    await fc.assert(
      fc.asyncProperty(exchange, async (sent) => {
        const before = delivered.length;
        const status = await send(sent);

        expect(expectedStatuses(sent)).toContain(status);
        const handedOn = delivered.slice(before);
        expect(handedOn.length).toBeLessThanOrEqual(status === 202 ? 1 : 0);
        if (sent.expected !== undefined && status === 202) {
          expect(handedOn.map((notification) => notification.deviceId)).toEqual([sent.expected.deviceId]);
        }
      }),
      propertyRuns(5_000),
    );
    expect(log.lines.filter(({ level }) => level !== 'debug')).toEqual([]);
    expect(log.lines.some(({ message }) => message.includes(SECRET))).toBe(false);
  }, 120_000);
});
