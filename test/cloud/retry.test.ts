import { describe, expect, it } from '@jest/globals';
import { pollUntil } from '../../scripts/lib/poll.js';
import { DEFAULT_RETRY_POLICY } from '../../src/cloud/retry-policy.js';
import type { Backoff } from '../../src/values/backoff.js';
import { ACCOUNT, accountClient, cloudFailure, doorbellClient, loginParams, REGISTRATION, registeredDoorbellClient, signIn, useSimulator } from './cloud-helpers.js';

describe('the retry policy', () => {
  const context = useSimulator();

  it('is at most 4 retries with exponential backoff and jitter', () => {
    expect(DEFAULT_RETRY_POLICY).toMatchObject({ retries: 4, backoff: { firstMs: 2000, factor: 2, maxMs: 30_000, jitter: true }, maxRetryAfterMs: 60_000 });
  });

  it('waits the backoff between attempts, each wait in the upper half of its step, the cap jittered too', async () => {
    const backoff: Backoff = { firstMs: 100, factor: 2, maxMs: 200, jitter: true };
    for (let call = 0; call < 3; call += 1) {
      context.sim.injectFault('region', { status: 503, times: 5 });
      await cloudFailure(accountClient(context, { retry: { ...context.retry.policy, backoff } }).resolveRegion(ACCOUNT.email), 'http');
    }

    // Steps of 100 and 200 ms, then the cap of 200: 4 waits a call, as 4 retries follow the first attempt.
    const steps = [100, 200, 200, 200];
    expect(context.retry.waits).toHaveLength(3 * steps.length);
    const outside = context.retry.waits.filter((waitMs, index) => waitMs < steps[index % 4] / 2 || waitMs > steps[index % 4]);
    expect(outside).toEqual([]);
    // At the cap the wait is still a random point in its upper half, not the cap itself every time.
    const capped = context.retry.waits.filter((_, index) => index % 4 > 0);
    expect(new Set(capped).size).toBeGreaterThan(1);
  });

  it('waits the larger of a Retry-After and the backoff, never one after the other', async () => {
    const backoff: Backoff = { firstMs: 1500, factor: 1, maxMs: 1500, jitter: false };
    context.sim.injectFault('region', { status: 429, retryAfter: '1' });
    context.sim.injectFault('region', { status: 503, retryAfter: '2' });

    await accountClient(context, { retry: { ...context.retry.policy, backoff } }).resolveRegion(ACCOUNT.email);

    // Told 1 s, it waits the backoff's 1.5 s; told 2 s, the 2 s alone: the waits are all there is.
    expect(context.retry.waits).toEqual([1500, 2000]);
    expect(context.sim.requestsTo('region').map((request) => request.status)).toEqual([429, 503, 200]);
  });

  it('retries 503 twice, then succeeds, with a new x-mercy-ks on every attempt', async () => {
    context.sim.injectFault('login', { status: 503, times: 2 });

    const login = await accountClient(context).loginWithCode(loginParams(context.sim.regionUrl));

    expect(login.token).toBe(context.sim.issuedTokens[0]);
    const attempts = context.sim.requestsTo('login');
    expect(attempts.map((request) => request.status)).toEqual([503, 503, 200]);
    expect(new Set(attempts.map((request) => request.headers['x-mercy-ks'])).size).toBe(3);
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it('waits out a Retry-After in seconds on 429', async () => {
    context.sim.injectFault('region', { status: 429, retryAfter: '7' });

    await accountClient(context).resolveRegion(ACCOUNT.email);

    expect(context.retry.waits).toEqual([7000]);
    expect(context.sim.requestsTo('region')).toHaveLength(2);
  });

  it('waits out a Retry-After given as an HTTP date', async () => {
    context.sim.injectFault('region', { status: 429, retryAfter: new Date(Date.now() + 5000).toUTCString() });

    await accountClient(context).resolveRegion(ACCOUNT.email);

    const [waited] = context.retry.waits;
    expect(waited).toBeGreaterThan(3000);
    expect(waited).toBeLessThanOrEqual(5000);
  });

  it('waits out a Retry-After on 503 too', async () => {
    const client = doorbellClient(context, await signIn(context));
    context.sim.injectFault('register', { status: 503, retryAfter: '2' });

    await client.registerPushDevice(REGISTRATION);

    expect(context.retry.waits).toEqual([2000]);
    expect(context.sim.requestsTo('register')).toHaveLength(2);
  });

  it('does not wait out an absurd Retry-After: it surfaces it for the background schedule', async () => {
    context.sim.injectFault('region', { status: 429, retryAfter: '3600' });

    const error = await cloudFailure(accountClient(context).resolveRegion(ACCOUNT.email), 'http');

    expect(error).toMatchObject({ status: 429, retryAfterMs: 3_600_000, retryable: true, serviceAnswered: false });
    expect(error.message).toContain('wait 3600 s');
    expect(context.retry.waits).toEqual([]);
    expect(context.sim.requestsTo('region')).toHaveLength(1);
  });

  it('retries a connection reset', async () => {
    const client = await registeredDoorbellClient(context);
    context.sim.injectFault('subscribe', { reset: true, times: 2 });

    await client.subscribeToMotion('1234567');

    expect(context.sim.requestsTo('subscribe').map((request) => request.status)).toEqual([0, 0, 200]);
  });

  it('retries a timeout', async () => {
    context.sim.injectFault('region', { delayMs: 1000 });

    await accountClient(context, { timeoutMs: 100 }).resolveRegion(ACCOUNT.email);

    // The delayed attempt timed out and the last was answered. A busy machine may hold a retry's
    // answer past the 100 ms too (the service runs in this process): then it was retried again.
    const lines = context.logger.lines;
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.slice(0, -1)).toEqual(lines.slice(0, -1).map(() => expect.stringMatching(/^POST \/api\/v1\/getUrlByEmail timeout [0-9]+ ms$/)));
    expect(lines.at(-1)).toMatch(/^POST \/api\/v1\/getUrlByEmail 200 [0-9]+ ms$/);
  });

  it('surfaces a timeout as kind timeout', async () => {
    context.sim.injectFault('region', { delayMs: 1000 });

    const error = await cloudFailure(accountClient(context, { timeoutMs: 100, retry: { retries: 0 } }).resolveRegion(ACCOUNT.email), 'timeout');

    expect(error).toMatchObject({ retryable: true, serviceAnswered: false });
    expect(error.message).toContain('none within 100 ms');
  });

  it('gives up after 4 retries, 5 requests in all', async () => {
    context.sim.injectFault('region', { status: 500, times: 10 });

    const error = await cloudFailure(accountClient(context).resolveRegion(ACCOUNT.email), 'http');

    expect(error).toMatchObject({ status: 500, retryable: true, serviceAnswered: false });
    expect(context.sim.requestsTo('region')).toHaveLength(5);
  });

  it('surfaces a network failure that outlasts the retries as kind network', async () => {
    context.sim.injectFault('region', { reset: true, times: 10 });

    const error = await cloudFailure(accountClient(context).resolveRegion(ACCOUNT.email), 'network');

    expect(error.retryable).toBe(true);
    expect(error.message).toContain('check the address and the network connection');
    expect(context.sim.requestsTo('region')).toHaveLength(5);
  });

  it.each([400, 403, 404, 409])('does not retry HTTP %i; without the service\'s envelope it is no decision of the service', async (status) => {
    context.sim.injectFault('login', { status });

    const error = await cloudFailure(accountClient(context).loginWithCode(loginParams(context.sim.regionUrl)), 'http');

    // A proxy's or firewall's refusal says nothing about the code: the background schedule may send it again.
    expect(error).toMatchObject({ status, retryable: false, serviceAnswered: false });
    expect(error.message).toBe(`POST /api/v4/auth/email/login/code failed: HTTP ${status} (not what the service sends)`);
    expect(context.sim.requestsTo('login')).toHaveLength(1);
  });

  it('does not retry HTTP 401, the service\'s decision on the session', async () => {
    const client = await registeredDoorbellClient(context);
    context.sim.injectFault('subscribe', { status: 401 });

    const error = await cloudFailure(client.subscribeToMotion('1234567'), 'unauthorized');

    expect(error).toMatchObject({ retryable: false, serviceAnswered: true, sessionInvalid: true });
    expect(context.sim.requestsTo('subscribe')).toHaveLength(1);
  });

  it('does not retry a service code', async () => {
    context.sim.injectFault('login', { serviceCode: 9002, msg: 'too many requests' });

    await cloudFailure(accountClient(context).loginWithCode(loginParams(context.sim.regionUrl)), 'service');

    expect(context.sim.requestsTo('login')).toHaveLength(1);
  });

  it('does not retry a malformed answer', async () => {
    context.sim.injectFault('login', { rawBody: '<html></html>', contentType: 'text/html' });

    await cloudFailure(accountClient(context).loginWithCode(loginParams(context.sim.regionUrl)), 'malformed');

    expect(context.sim.requestsTo('login')).toHaveLength(1);
  });
});

describe('aborting', () => {
  const context = useSimulator();

  /** Aborts once the client has logged the first answer, `status`: while it waits to try again. */
  async function abortOnceAnswered(status: number, controller: AbortController): Promise<void> {
    await pollUntil(() => context.logger.lines, (lines) => lines.some((line) => line.includes(` ${status} `)), 5_000, `the ${status} answer`);
    controller.abort();
  }

  it('cancels a request in flight', async () => {
    context.sim.injectFault('region', { delayMs: 5000 });
    const controller = new AbortController();
    const started = Date.now();

    const pending = accountClient(context).resolveRegion(ACCOUNT.email, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const error = await cloudFailure(pending, 'aborted');

    // Before the delayed answer would have come, however busy the machine.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error).toMatchObject({ retryable: false, serviceAnswered: false });
    expect(context.logger.lines).toEqual([expect.stringMatching(/^POST \/api\/v1\/getUrlByEmail aborted [0-9]+ ms$/)]);
  });

  it('cancels a pending backoff before the next attempt', async () => {
    context.sim.injectFault('region', { status: 503, times: 10 });
    const controller = new AbortController();
    const client = accountClient(context, { retry: { backoff: { firstMs: 10_000, factor: 2, maxMs: 10_000, jitter: true } } });

    const pending = client.resolveRegion(ACCOUNT.email, { signal: controller.signal });
    await abortOnceAnswered(503, controller);

    await cloudFailure(pending, 'aborted');
    expect(context.sim.requestsTo('region')).toHaveLength(1);
  });

  it('cancels a pending Retry-After wait (the real one)', async () => {
    context.sim.injectFault('region', { status: 429, retryAfter: '30' });
    const controller = new AbortController();
    const client = accountClient(context, { retry: { backoff: { firstMs: 1, factor: 2, maxMs: 4, jitter: true } } });
    const started = Date.now();

    const pending = client.resolveRegion(ACCOUNT.email, { signal: controller.signal });
    await abortOnceAnswered(429, controller);

    await cloudFailure(pending, 'aborted');
    // Well before the 30 s Retry-After would have ended, however busy the machine.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(context.sim.requestsTo('region')).toHaveLength(1);
  });

  it('sends nothing with a signal that is already aborted', async () => {
    await cloudFailure(accountClient(context).resolveRegion(ACCOUNT.email, { signal: AbortSignal.abort() }), 'aborted');

    expect(context.sim.requests).toHaveLength(0);
  });
});
