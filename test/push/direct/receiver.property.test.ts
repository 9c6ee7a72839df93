/**
 * The push receiver of a running platform (direct mode, real HAP services) over real HTTP, with
 * generated and mutated requests (fast-check): only the documented statuses, in the documented order
 * of checks, never a crash, and HomeKit state that changes only for an accepted notification, and
 * then exactly as it says: motion raises MotionDetected, a ring fires both press events.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Agent, request } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { MIN_RING_INTERVAL_MS } from '../../../src/accessories/doorbell-accessory.js';
import { MAX_BODY_BYTES } from '../../../src/push/intake.js';
import { changesOf, recordHapChanges, type HapChange } from '../../support/hap-changes.js';
import { FAST, waitFor } from '../../../scripts/lib/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from '../../support/platform-testbed.js';
import { MOTION_SUBTYPES, SHAPE_NAMES, SHAPES } from '../../support/notification-payloads.js';
import { propertyRuns } from '../../support/property-runs.js';

/** The gate's doorbell button is turned off: a ring there changes nothing. */
const DOORBELLS = [
  { deviceId: '1234567', name: 'Front Door', button: true },
  { deviceId: '9007199254740993', name: 'Back Door', button: true },
  { deviceId: '42', name: 'Gate', button: false },
];
const [FRONT, BACK, GATE] = DOORBELLS.map(({ deviceId }) => deviceId);

const DOCUMENTED_STATUSES = [202, 400, 404, 405, 413, 415];
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** What a body holds: a notification, certainly none, or nobody knows (mutated, random). */
type Content = { is: 'notification'; deviceId: string; kind: string; id?: string } | { is: 'refused' } | { is: 'unknown' };
type Payload = { body: Buffer; content: Content };

interface Exchange extends Payload {
  method: string;
  path: string;
  headerName: string;
  contentType: string | undefined;
  chunked: boolean;
  /** Sent a second time right after: a redelivery. */
  twice: boolean;
}

const configuredId = fc.constantFrom(FRONT, BACK, GATE);
/** As a JSON integer or as a decimal string: both name the same doorbell. */
const deviceId = fc
  .tuple(fc.oneof({ weight: 3, arbitrary: configuredId }, { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String) }), fc.boolean())
  .map(([id, quoted]) => ({ id, json: quoted ? `"${id}"` : id }));
/** Unbiased, so that no two generated notifications share an id by chance: only `twice` redelivers. */
const eventId = fc.option(
  fc.oneof(
    fc.noBias(fc.uuid()).map((id) => ({ id, json: `"${id}"` })),
    fc.noBias(fc.bigInt({ min: 0n, max: 2n ** 64n })).map((id) => ({ id: String(id), json: String(id) })),
  ),
  { nil: undefined },
);
/** Mostly small bodies; some padded to one byte under, at or over the size limit. */
const size = fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: MAX_BODY_BYTES - 1, max: MAX_BODY_BYTES + 1 }) });

const notificationBody: fc.Arbitrary<Payload> = fc
  .record({
    device: deviceId,
    kind: fc.constantFrom('motion', 'ding', 'intercom_unlock'),
    event: eventId,
    shape: fc.constantFrom(...SHAPE_NAMES),
    // Beside a kind it changes no kind; the shape without a kind writes the kind itself as its subtype.
    subtype: fc.constantFrom(...MOTION_SUBTYPES, 'ding'),
    size,
  })
  .map(({ device, kind, event, shape, subtype, size: length }) => {
    const text = SHAPES[shape]({ deviceId: device.json, kind, subtype: shape === 'subtypeForKind' ? undefined : `"${subtype}"`, id: event?.json });
    // Spaces keep it valid JSON while it reaches and passes the size limit.
    return { body: Buffer.from(text.padEnd(length, ' ')), content: { is: 'notification', deviceId: device.id, kind, ...(event && { id: event.id }) } };
  });

/** Each names a configured doorbell where it can, so that accepting one by mistake would show in HomeKit. */
const refusedBody: fc.Arbitrary<Payload> = fc
  .oneof(
    fc.constantFrom('0', '-1', '9223372036854775808', '"01"', '1234567.0', '1e6', '""', 'null', 'true', '[1234567]', '{}').map((bad) => `{"device_id": ${bad}, "kind": "motion"}`),
    fc.tuple(configuredId, fc.constantFrom('', ', "kind": ""', ', "kind": 5', ', "kind": null', ', "kind": ["motion"]', ', "subtype": {}')).map(([id, bad]) => `{"device_id": ${id}${bad}}`),
    fc.tuple(configuredId, fc.constantFrom('7.5', '1e3', 'true', 'null', '{}', '["e"]')).map(([id, bad]) => `{"device_id": ${id}, "kind": "motion", "id": ${bad}}`),
    // No category: the subtype does not stand in for it.
    configuredId.map((id) => `{"android_config": {}, "data": {"device": {"id": ${id}}, "event": {"ding": {"subtype": "human"}}}}`),
    configuredId.map((id) => `[{"device_id": ${id}, "kind": "motion"}]`),
    configuredId.map((id) => `{"device_id": ${id}, "kind": "motion",}`),
    configuredId.map((id) => `{"device_id": ${id}, "kind": "motion"`),
    fc.constantFrom('', 'null', '"motion"', '5'),
    // Not UTF-8: a lone continuation byte inside the kind.
    configuredId.map((id) => `{"device_id": ${id}, "kind": "mo\x80tion"}`),
  )
  .map((text) => ({ body: Buffer.from(text, 'latin1'), content: { is: 'refused' } }));

const unknownBody: fc.Arbitrary<Payload> = fc
  .oneof(
    fc.tuple(notificationBody, fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.nat()).map(([{ body }, junk, at]) => {
      const cut = at % (body.length + 1);
      return Buffer.concat([body.subarray(0, cut), Buffer.from(junk), body.subarray(cut)]);
    }),
    fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? '')),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  )
  .map((body) => ({ body, content: { is: 'unknown' } }));

/** `text` with each letter in either case. */
function anyCase(text: string): fc.Arbitrary<string> {
  return fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }).map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
}

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(anyCase('application/json'), fc.constantFrom('', ';charset=utf-8', '; charset=UTF-8', ' ; charset="utf-8"', '; q=1; charset=utf-8', ';')).map(([type, parameters]) => type + parameters) },
  { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/jsonx', 'application/json-patch+json', 'application/ld+json', 'json', 'application/ json', 'multipart/form-data; boundary=x', '') },
  { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const pathChars = fc.constantFrom(...'abcXYZ019-._~!$&\'()*+,;=:@/%?');
const query = fc.string({ unit: pathChars, maxLength: 20 }).map((text) => `?${text}`);

/** The push path, with a query or not; a wrong secret (one character off, cut short, longer, another case); other paths. */
function paths(pushPath: string): fc.Arbitrary<string> {
  const secret = pushPath.slice('/push/'.length);
  const wrongSecret = fc.oneof(
    fc.tuple(fc.nat(secret.length - 1), fc.constantFrom(...BASE64URL)).filter(([at, c]) => secret[at] !== c).map(([at, c]) => secret.slice(0, at) + c + secret.slice(at + 1)),
    fc.nat(secret.length - 1).map((length) => secret.slice(0, length)),
    fc.constantFrom(...BASE64URL).map((c) => secret + c),
    fc.noBias(fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: secret.length, maxLength: secret.length })),
    anyCase(secret.toLowerCase()).filter((text) => text !== secret),
  );
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(pushPath) },
    { weight: 2, arbitrary: query.map((text) => pushPath + text) },
    { weight: 2, arbitrary: fc.tuple(wrongSecret, fc.option(query, { nil: '' })).map(([wrong, text]) => `/push/${wrong}${text}`) },
    { weight: 1, arbitrary: fc.constantFrom(`${pushPath}/`, `/Push/${secret}`, `//push/${secret}`, `/push//${secret}`, `/x${pushPath}`, '/push/', '/push', '/') },
    { weight: 1, arbitrary: fc.string({ unit: pathChars, minLength: 1, maxLength: 8 }).map((tail) => pushPath + tail) },
    { weight: 1, arbitrary: fc.string({ unit: pathChars, maxLength: 60 }).map((tail) => `/${tail}`) },
  );
}

function exchanges(pushPath: string): fc.Arbitrary<Exchange> {
  return fc
    .record({
      method: fc.oneof({ weight: 8, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') }),
      path: paths(pushPath),
      headerName: fc.constantFrom('content-type', 'Content-Type', 'CONTENT-TYPE', 'cOnTeNt-TyPe'),
      contentType,
      payload: fc.oneof({ weight: 4, arbitrary: notificationBody }, { weight: 2, arbitrary: refusedBody }, { weight: 2, arbitrary: unknownBody }),
      chunked: fc.boolean(),
      twice: fc.boolean(),
    })
    // Node's client sends a body of a GET or DELETE without framing (a malformed request): only POST is chunked.
    .map(({ payload, chunked, ...rest }) => ({ ...rest, ...payload, chunked: chunked && rest.method === 'POST' }));
}

/** The documented order: path and secret (any query ignored), method, content type, size, then JSON and shape. */
function expectedStatuses({ method, path, contentType: type, body, content }: Exchange, pushPath: string): number[] {
  if (path.split('?')[0] !== pushPath) {
    return [404];
  }
  if (method !== 'POST') {
    return [405];
  }
  if (type?.split(';')[0].trim().toLowerCase() !== 'application/json') {
    return [415];
  }
  if (body.length > MAX_BODY_BYTES) {
    return [413];
  }
  return { notification: [202], refused: [400], unknown: [202, 400] }[content.is];
}

/** The changes allowed: nothing unless accepted; then what the notification says, once (a redelivery with the same id is dropped). */
function expectedChanges({ content }: Exchange, status: number, redelivery: boolean): HapChange[][] {
  if (status !== 202) {
    return [[]];
  }
  if (content.is === 'notification') {
    const doorbell = DOORBELLS.find(({ deviceId: id }) => id === content.deviceId);
    const duplicate = redelivery && content.id !== undefined;
    return [doorbell === undefined || duplicate ? [] : changesOf(doorbell.deviceId, content.kind, doorbell.button)];
  }
  // A mutated body may still be some notification: at most what one could do to one doorbell.
  return [[], ...DOORBELLS.flatMap(({ deviceId: id, button }) => [changesOf(id, 'motion', button), changesOf(id, 'ding', button)])];
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
afterAll(() => agent.destroy());

function send(port: number, { method, path, headerName, contentType: type, body, chunked }: Exchange): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = type === undefined ? {} : { [headerName]: type };
    const outgoing = request({ host: '127.0.0.1', port, method, path, headers, agent }, (response) => {
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

const testbed = usePlatformTestbed(DOORBELLS.map(({ deviceId: id }) => id));

describe('the push receiver of a running platform, for any request', () => {
  it('answers only the documented statuses in the documented order, and changes HomeKit only as an accepted notification says', async () => {
    // Motion stays on for an hour: no end of motion falls into a request. Each notification is
    // accepted 5 s after the one before on the rings' clock, so that every ring may press.
    let monotonic = 0;
    const timing = { ...FAST, monotonicNow: () => (monotonic += MIN_RING_INTERVAL_MS) };
    const platform = testbed.launch({ overrides: { doorbells: DOORBELLS, motionTimeout: 3600 }, timing });
    await waitFor(() => allConfirmed(platform, DOORBELLS) && testbed.sim.pushToken !== undefined, 'subscriptions');
    const pushPath = new URL(testbed.sim.pushToken as string).pathname;
    const notices = () => platform.log.lines.filter(({ level }) => level === 'warn' || level === 'error');
    const noticesAtStart = notices().length;
    const hapChanges = recordHapChanges(platform, DOORBELLS.map(({ deviceId: id }) => id));
    const seen = { statuses: new Set<number>(), changes: new Set<string>() };

    // One request for each status, and a ring at the gate: every run covers them, whatever it generates.
    const example = (overrides: Partial<Exchange>, id: string, kind = 'motion'): [Exchange] => [
      {
        method: 'POST', path: pushPath, headerName: 'Content-Type', contentType: 'application/json; charset=utf-8', chunked: false, twice: true,
        body: Buffer.from(`{"device_id": ${id}, "kind": "${kind}", "id": "example-${kind}"}`), content: { is: 'notification', deviceId: id, kind, id: `example-${kind}` },
        ...overrides,
      },
    ];
    const examples = [
      example({}, FRONT),
      example({}, BACK, 'ding'),
      example({}, GATE, 'ding'),
      example({ path: pushPath.slice(0, -1) }, FRONT),
      example({ method: 'PUT' }, FRONT),
      example({ contentType: 'text/plain' }, FRONT),
      example({ body: Buffer.alloc(MAX_BODY_BYTES + 1, ' ') }, FRONT),
      example({ body: Buffer.from('{"device_id": 0, "kind": "motion"}'), content: { is: 'refused' } }, FRONT),
    ];

    await fc.assert(
      fc.asyncProperty(exchanges(pushPath), async (sent) => {
        for (const redelivery of sent.twice ? [false, true] : [false]) {
          const status = await send(testbed.pushPort, sent);
          const changes = hapChanges.take();

          expect(expectedStatuses(sent, pushPath)).toContain(status);
          const allowed = expectedChanges(sent, status, redelivery);
          expect(changes).toEqual(allowed.find((candidate) => isDeepStrictEqual(candidate, changes)) ?? allowed[0]);
          seen.statuses.add(status);
          changes.forEach(({ characteristic }) => seen.changes.add(characteristic));
        }
      }),
      { ...propertyRuns(5_000), examples },
    );

    expect([...seen.statuses].sort()).toEqual(DOCUMENTED_STATUSES);
    expect([...seen.changes].sort()).toEqual(['Doorbell.ProgrammableSwitchEvent', 'MotionSensor.MotionDetected', 'StatelessProgrammableSwitch.ProgrammableSwitchEvent']);
    expect(notices().slice(noticesAtStart)).toEqual([]);
    expect(platform.log.lines.filter(({ message }) => message.includes(pushPath.slice('/push/'.length)))).toEqual([]);
  }, 120_000);
});
