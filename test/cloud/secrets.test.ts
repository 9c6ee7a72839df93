import { inspect } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import type { CloudError } from '../../src/cloud/errors.js';
import { ACCOUNT, accountClient, DEBUG_LINE, doorbellClient, loginParams, NON_LOOPBACK_HTTP, REGISTRATION, signIn, useSimulator } from './cloud-helpers.js';
import type { TestContext } from './cloud-helpers.js';

const WRONG_CODE = '987654';

/** Failing calls that each had a secret or the e-mail in hand, by the part of the request holding it. */
const SCENARIOS: Array<[string, (context: TestContext, token: string) => Promise<unknown>]> = [
  ['a wrong code (service answer)', (context) => accountClient(context).loginWithCode({ ...loginParams(context.sim.regionUrl), code: WRONG_CODE })],
  [
    'a login that never gets an answer (network, sanitised cause)',
    (context) => {
      context.sim.injectFault('login', { reset: true, times: 10 });
      return accountClient(context).loginWithCode({ ...loginParams(context.sim.regionUrl), code: WRONG_CODE });
    },
  ],
  [
    'a login that times out',
    (context) => {
      context.sim.injectFault('login', { delayMs: 1000 });
      const client = accountClient(context, { timeoutMs: 50, retry: { retries: 0 } });
      return client.loginWithCode({ ...loginParams(context.sim.regionUrl), code: WRONG_CODE });
    },
  ],
  ['a login to plain http', (context) => accountClient(context).loginWithCode({ ...loginParams(NON_LOOPBACK_HTTP), code: WRONG_CODE })],
  [
    'a malformed region answer',
    (context) => {
      context.sim.injectFault('region', { rawBody: '<html>oops</html>', contentType: 'text/html' });
      return accountClient(context).resolveRegion(ACCOUNT.email);
    },
  ],
  [
    'a region call that is rate-limited',
    (context) => {
      context.sim.injectFault('region', { status: 429, retryAfter: '600' });
      return accountClient(context).resolveRegion(ACCOUNT.email);
    },
  ],
  [
    'a revoked bearer token',
    (context, token) => {
      context.sim.revokeToken(token);
      return doorbellClient(context, token).registerPushDevice(REGISTRATION);
    },
  ],
  [
    'a registration that never gets an answer (network, sanitised cause)',
    (context, token) => {
      context.sim.injectFault('register', { reset: true, times: 10 });
      return doorbellClient(context, token).registerPushDevice(REGISTRATION);
    },
  ],
  [
    'an aborted registration',
    (context, token) => {
      context.sim.injectFault('register', { delayMs: 2000 });
      return doorbellClient(context, token).registerPushDevice(REGISTRATION, { signal: AbortSignal.timeout(50) });
    },
  ],
];

describe('secrets in errors and debug lines', () => {
  const context = useSimulator();

  it.each(SCENARIOS)('none leaks from %s', async (_name, fail) => {
    const token = await signIn(context);
    const secrets = [token, WRONG_CODE, ACCOUNT.code, ACCOUNT.email, encodeURIComponent(ACCOUNT.email), 'Bearer', REGISTRATION.token, 'receiver-secret', 'x-mercy'];
    const before = context.logger.lines.length;

    const error = (await fail(context, token).then(
      () => undefined,
      (reason: unknown) => reason,
    )) as CloudError;

    expect(error?.name).toBe('CloudError');
    // inspect shows the cause and every own property: what a careless `log(error)` would print.
    const shown = [error.message, String(error), inspect(error, { depth: Infinity }), ...context.logger.lines.slice(before)];
    for (const text of shown) {
      for (const secret of secrets) {
        expect(text).not.toContain(secret);
      }
    }
    for (const line of context.logger.lines) {
      expect(line).toMatch(DEBUG_LINE);
    }
  });
});
