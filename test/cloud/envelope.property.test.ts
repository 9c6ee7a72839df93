/** Properties of reading the account service's `{code, msg, data}` answers, with fast-check. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { envelopeShape, field, readEnvelopeData } from '../../src/cloud/envelope.js';
import { CloudError } from '../../src/cloud/errors.js';
import { propertyRuns } from '../support/property-runs.js';

interface Login {
  token: string;
  uid?: number;
}

const LOGIN = envelopeShape<Login>({ token: field.string, uid: field.integer }, 'token');
const REQUEST = { method: 'POST', path: '/api/v4/auth/email/login/code' };

/** A value that must never appear in an error: it stands for a token the answer carried. */
const MARKER = 'tok-7f3a9c21';

const anyJson = fc.jsonValue();
const envelopeLike = fc.record(
  {
    code: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
    msg: fc.oneof(fc.string(), fc.integer()),
    data: fc.oneof(
      fc.constant(null),
      anyJson,
      fc.record({ token: fc.oneof(fc.constant(MARKER), fc.constant(''), fc.integer(), fc.constant(null)), uid: fc.oneof(fc.integer(), fc.string()) }, { requiredKeys: [] }),
    ),
    extra: anyJson,
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  envelopeLike.map((envelope) => JSON.stringify(envelope)),
  anyJson.map((value) => JSON.stringify(value)),
  fc.string(),
  fc.constant(''),
);

describe('readEnvelopeData, for any answer', () => {
  it('returns data with the required field, or throws a CloudError that is the service\'s no or a malformed answer, never quoting a value', () => {
    fc.assert(
      fc.property(body, fc.integer({ min: 200, max: 299 }), (text, status) => {
        let outcome: { data: Login } | { error: unknown };
        try {
          outcome = { data: readEnvelopeData({ status, contentType: 'application/json', body: text }, REQUEST, LOGIN) };
        } catch (error) {
          outcome = { error };
        }
        if ('data' in outcome) {
          expect(typeof outcome.data.token === 'string' && outcome.data.token !== '').toBe(true);
          return;
        }
        const { error } = outcome;
        expect(error).toBeInstanceOf(CloudError);
        const cloudError = error as CloudError;
        expect(['service', 'malformed']).toContain(cloudError.kind);
        expect(cloudError.kind === 'service').toBe(cloudError.serviceCode !== undefined);
        expect(cloudError.retryable).toBe(false);
        expect(cloudError.message).not.toContain(MARKER);
        expect(cloudError.message.startsWith('POST /api/v4/auth/email/login/code failed: ')).toBe(true);
      }),
      propertyRuns(10_000),
    );
  });
});
