import { inspect } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import type { Fault, RouteName } from '../../simulator/types.js';
import { DoorbellClient } from '../../src/cloud/doorbell.js';
import { CloudError } from '../../src/cloud/errors.js';
import { ACCOUNT, accountClient, DEBUG_LINE, doorbellClient, loginParams, NON_LOOPBACK_HTTP, REGISTRATION, signIn, useSimulator } from './cloud-helpers.js';
import type { TestContext } from './cloud-helpers.js';

const WRONG_CODE = '987654';

/** Failing calls that each had a secret or the e-mail in hand, beyond the injected faults below. */
const SCENARIOS: Array<[string, (context: TestContext, token: string) => Promise<unknown>]> = [
  ['a wrong code (service answer)', (context) => accountClient(context).loginWithCode({ ...loginParams(context.sim.regionUrl), code: WRONG_CODE })],
  ['a login to plain http', (context) => accountClient(context).loginWithCode({ ...loginParams(NON_LOOPBACK_HTTP), code: WRONG_CODE })],
  [
    'a malformed region answer',
    (context) => {
      context.sim.injectFault('region', { rawBody: '<html>oops</html>', contentType: 'text/html' });
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
    'an aborted registration',
    (context, token) => {
      context.sim.injectFault('register', { delayMs: 2000 });
      return doorbellClient(context, token).registerPushDevice(REGISTRATION, { signal: AbortSignal.timeout(50) });
    },
  ],
];

/** A stalled request times out quickly. */
const QUICK = { timeoutMs: 100 };

/** Each route's call, made with the session token and the code, up to the request the fault hits. */
const ROUTE_CALLS: Record<RouteName, (context: TestContext, token: string) => Promise<unknown>> = {
  region: (context) => accountClient(context, { ...QUICK, retry: quickRetry(context) }).resolveRegion(ACCOUNT.email),
  login: (context) => accountClient(context, { ...QUICK, retry: quickRetry(context) }).loginWithCode(loginParams(context.sim.regionUrl)),
  register: (context, token) => quickDoorbellClient(context, token).registerPushDevice(REGISTRATION),
  subscribe: async (context, token) => {
    const client = quickDoorbellClient(context, token);
    await client.registerPushDevice(REGISTRATION);
    return client.subscribeToMotion('1234567');
  },
  devices: (context, token) => quickDoorbellClient(context, token).listDoorbells(),
};

/** What the clients meet on the way: a failing server, a reset, rate limits, a stall, a refused code, a refused session. */
const FAULTS: Array<[string, Fault]> = [
  ['503', { status: 503, times: 10 }],
  ['a reset', { reset: true, times: 10 }],
  ['429', { status: 429, retryAfter: '600' }],
  ['a stall past the timeout', { delayMs: 1000, times: 10 }],
  ['code 2018', { serviceCode: 2018 }],
  ['401', { status: 401 }],
];

const FAULTED_CALLS = (Object.keys(ROUTE_CALLS) as RouteName[]).flatMap((route) =>
  FAULTS.filter(([, fault]) => fault.serviceCode === undefined || route === 'region' || route === 'login').map(
    ([name, fault]): [RouteName, string, Fault] => [route, name, fault],
  ),
);

/** One retry, so the error of a retried failure is seen too. */
function quickRetry(context: TestContext) {
  return { ...context.retry.policy, retries: 1 };
}

function quickDoorbellClient(context: TestContext, token: string): DoorbellClient {
  return new DoorbellClient({ serverUrl: context.sim.doorbellUrl, accessToken: token, logger: context.logger, retry: quickRetry(context), ...QUICK });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
}

/**
 * Every way the error can be shown: its message, what a careless `log(error)` or `JSON.stringify`
 * prints, hidden properties and the whole cause chain included.
 */
function renderings(error: unknown): string[] {
  return [String(error), inspect(error, { depth: Infinity, showHidden: true }), JSON.stringify(error)];
}

function expectNoSecretIn(texts: readonly string[], secrets: readonly string[]): void {
  for (const text of texts) {
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
    }
  }
}

describe('secrets in errors and debug lines', () => {
  const context = useSimulator();

  /** What the simulator handed out or was given, the code and token these calls sent, and how they were sent. */
  const secretsSent = (token: string): string[] => [
    ...context.sim.secrets,
    token,
    ACCOUNT.code,
    WRONG_CODE,
    ACCOUNT.email,
    encodeURIComponent(ACCOUNT.email),
    'Bearer',
    REGISTRATION.token,
    'receiver-secret',
    'x-mercy',
  ];

  it.each(SCENARIOS)('none leaks from %s', async (_name, fail) => {
    const token = await signIn(context);
    const before = context.logger.lines.length;

    const error = await rejection(fail(context, token));

    expect(error).toBeInstanceOf(CloudError);
    expectNoSecretIn([...renderings(error), ...context.logger.lines.slice(before)], secretsSent(token));
    for (const line of context.logger.lines) {
      expect(line).toMatch(DEBUG_LINE);
    }
  });

  it.each(FAULTED_CALLS)('none leaks from the %s call meeting %s', async (route, _name, fault) => {
    const token = await signIn(context);
    context.sim.injectFault(route, fault);

    const error = await rejection(ROUTE_CALLS[route](context, token));

    expect(error).toBeInstanceOf(CloudError);
    expectNoSecretIn(renderings(error), secretsSent(token));
  });
});
