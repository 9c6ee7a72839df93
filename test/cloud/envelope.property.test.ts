/**
 * The account service's `{code, msg, data}` answers, read by the real account client over loopback
 * HTTP from a server that answers each generated status and body (fast-check). A 2xx envelope whose
 * data holds what the call needs gives exactly that data, whatever else it carries at any level; an
 * integer code without it is the service's refusal with that code; any other status is an HTTP
 * failure; and no error ever quotes a value of the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AccountClient } from '../../src/cloud/account.js';
import { CloudError } from '../../src/cloud/errors.js';
import { propertyRuns } from '../support/property-runs.js';

type Call = 'region' | 'login';

const PATHS: Record<Call, string> = { region: '/api/v1/getUrlByEmail', login: '/api/v4/auth/email/login/code' };

/** A value that must never appear in an error: it stands for a token the answer carried. */
const MARKER = 'tok-7f3a9c21';

const text = fc.string({ maxLength: 12 });
const nonEmpty = fc.string({ minLength: 1, maxLength: 24 });

/** An object with these fields (the required ones always, the others or not) and keys nobody knows. */
function objectOf(fields: Record<string, fc.Arbitrary<unknown>>, required: string[] = []): fc.Arbitrary<Record<string, unknown>> {
  const known = Object.keys(fields);
  const unknownKey = fc.string({ minLength: 1, maxLength: 8 }).filter((key) => !known.includes(key));
  return fc
    .tuple(fc.record(fields, { requiredKeys: required as never[] }), fc.dictionary(unknownKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }))
    .map(([value, unknown]) => ({ ...unknown, ...value }));
}

/** What each call's `data` may hold besides the field it needs, typed as the service sends it. */
const OPTIONAL_DATA: Record<Call, Record<string, fc.Arbitrary<unknown>>> = {
  region: { country: text, countrycode: text },
  login: {
    avatarurl: text,
    country: text,
    countrycode: text,
    nickname: text,
    region: text,
    rriot: objectOf({ h: text, k: text, s: text, u: text, r: objectOf({ a: text, l: text, m: text, r: text }) }),
    rruid: text,
    tokentype: text,
    tuyaDeviceState: fc.integer(),
    uid: fc.integer(),
  },
};
const REQUIRED: Record<Call, string> = { region: 'url', login: 'token' };

/** What the client hands on from `data`: the regional address, or the session fields it stores. */
const KEPT: Record<Call, string[]> = {
  region: ['url', 'country', 'countrycode'],
  login: ['token', 'tokentype', 'rruid', 'rriot', 'uid', 'region', 'country', 'countrycode', 'nickname'],
};

/** HTTP forbids a body with 204 and 304; every other final status may carry an envelope. */
const status = fc
  .oneof({ weight: 3, arbitrary: fc.integer({ min: 200, max: 299 }) }, { weight: 1, arbitrary: fc.constantFrom(401, 429, 503) }, { weight: 2, arbitrary: fc.integer({ min: 300, max: 599 }) })
  .filter((code) => code !== 204 && code !== 304);

const call = fc.constantFrom<Call>('region', 'login');

/** An envelope whose data holds a non-empty string where the call needs one; code absent or any integer. */
const validEnvelope = call.chain((name) =>
  fc.record({
    call: fc.constant(name),
    envelope: objectOf({ code: fc.integer(), msg: text, data: objectOf({ ...OPTIONAL_DATA[name], [REQUIRED[name]]: nonEmpty }, [REQUIRED[name]]) }, ['data']),
  }),
);

/** The service saying no: an integer code, and data that is null, absent, or lacks what the call needs. */
const refusal = call.chain((name) => {
  const withoutIt = fc.oneof(objectOf(OPTIONAL_DATA[name]), objectOf({ ...OPTIONAL_DATA[name], [REQUIRED[name]]: fc.constant('') }, [REQUIRED[name]]));
  return fc.record({ call: fc.constant(name), envelope: objectOf({ code: fc.integer(), msg: text, data: fc.oneof(fc.constant(null), withoutIt) }, ['code']) });
});

/** Anything at all, envelopes with the wrong types included. */
const anyJson = fc.jsonValue();
const envelopeLike = fc.record(
  {
    code: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
    msg: fc.oneof(fc.string(), fc.integer()),
    data: fc.oneof(
      fc.constant(null),
      anyJson,
      fc.record({ token: fc.oneof(fc.constant(MARKER), fc.constant(''), fc.integer(), fc.constant(null)), url: fc.constant(MARKER), uid: fc.oneof(fc.integer(), fc.string()) }, { requiredKeys: [] }),
    ),
    extra: anyJson,
  },
  { requiredKeys: [] },
);
const anyBody = fc.oneof(envelopeLike.map((envelope) => JSON.stringify(envelope)), anyJson.map((value) => JSON.stringify(value)), fc.string(), fc.constant(''));

/** The next answer of the loopback account service: the same for the region and the login route. */
let answer = { status: 200, body: '' };
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume().on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' }).end(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type Outcome = { value: Record<string, unknown> } | { error: CloudError };

/** The call through the real client, answered with `status` and `body`; one attempt, so each answer is judged once. */
async function callWith(name: Call, answerStatus: number, body: string): Promise<Outcome> {
  answer = { status: answerStatus, body };
  const client = new AccountClient({ serverUrl: baseUrl, clientId: 'client-7f3a9c', retry: { retries: 0 } });
  const login = { regionUrl: baseUrl, email: 'a+b@example.com', code: '012345', country: 'US', countryCode: '1', majorVersion: 14, minorVersion: 0 };
  const request = name === 'region' ? client.resolveRegion(login.email) : client.loginWithCode(login);
  try {
    return { value: { ...(await request) } };
  } catch (error) {
    expect(error).toBeInstanceOf(CloudError);
    const cloudError = error as CloudError;
    expect(cloudError.message.startsWith(`POST ${PATHS[name]} failed: `)).toBe(true);
    return { error: cloudError };
  }
}

const is2xx = (code: number): boolean => code >= 200 && code <= 299;

/** A status other than 2xx is an HTTP failure whatever the body, carrying the service's code when the body has one. */
function expectHttpFailure(outcome: Outcome, answerStatus: number, serviceCode: unknown): void {
  expect(outcome).toEqual({ error: expect.any(CloudError) });
  const { error } = outcome as { error: CloudError };
  expect({ kind: error.kind, status: error.status, serviceCode: error.serviceCode, retryable: error.retryable }).toEqual({
    kind: answerStatus === 401 ? 'unauthorized' : 'http',
    status: answerStatus,
    serviceCode,
    retryable: answerStatus === 429 || answerStatus >= 500,
  });
}

describe('the account client reading an answer', () => {
  it('gives exactly the data of a valid envelope with a 2xx status, other keys at any level tolerated', async () => {
    await fc.assert(
      fc.asyncProperty(validEnvelope, status, async ({ call: name, envelope }, answerStatus) => {
        const body = JSON.stringify(envelope);
        const outcome = await callWith(name, answerStatus, body);
        if (!is2xx(answerStatus)) {
          expectHttpFailure(outcome, answerStatus, envelope.code);
          return;
        }
        // As it went over the wire: JSON has no -0, say.
        const data = (JSON.parse(body) as { data: Record<string, unknown> }).data;
        expect(outcome).toEqual({ value: Object.fromEntries(KEPT[name].map((key) => [key, data[key]])) });
      }),
      propertyRuns(5_000),
    );
  }, 60_000);

  it("reports an integer code without the data the call needs as the service's refusal, with that code and msg", async () => {
    await fc.assert(
      fc.asyncProperty(refusal, status, async ({ call: name, envelope }, answerStatus) => {
        const outcome = await callWith(name, answerStatus, JSON.stringify(envelope));
        if (!is2xx(answerStatus)) {
          expectHttpFailure(outcome, answerStatus, envelope.code);
          return;
        }
        const { error } = outcome as { error: CloudError };
        expect({ kind: error?.kind, status: error?.status, serviceCode: error?.serviceCode, serviceMsg: error?.serviceMsg }).toEqual({
          kind: 'service',
          status: answerStatus,
          serviceCode: envelope.code,
          serviceMsg: envelope.msg,
        });
        expect([error.retryable, error.serviceAnswered]).toEqual([false, true]);
      }),
      propertyRuns(5_000),
    );
  }, 60_000);

  it("succeeds only on a 2xx answer with the needed field, and otherwise fails as the service's no, a malformed answer or an HTTP failure, never quoting a value", async () => {
    await fc.assert(
      fc.asyncProperty(call, anyBody, status, async (name, body, answerStatus) => {
        const outcome = await callWith(name, answerStatus, body);
        if ('value' in outcome) {
          expect(is2xx(answerStatus)).toBe(true);
          expect(outcome.value[REQUIRED[name]]).toEqual(expect.stringMatching(/./));
          return;
        }
        const { error } = outcome;
        expect(is2xx(answerStatus) ? ['service', 'malformed'] : [answerStatus === 401 ? 'unauthorized' : 'http']).toContain(error.kind);
        expect(error.status).toBe(answerStatus);
        expect(error.kind === 'service').toBe(is2xx(answerStatus) && error.serviceCode !== undefined);
        expect(error.message).not.toContain(MARKER);
      }),
      propertyRuns(5_000),
    );
  }, 60_000);
});
