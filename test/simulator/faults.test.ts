import { describe, expect, it } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import type { Fault, RouteName } from '../../simulator/index.js';
import { useSimulator } from '../support/simulator.js';
import { json, send } from './http.js';
import { ACCOUNT, login, loginForm, regionUrl, register, signIn, subscribe } from './requests.js';

describe('simulator: injected faults', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT] });

  it('answers an HTTP status with Retry-After for `times` requests, then normally', async () => {
    simulator().injectFault('region', { status: 503, retryAfter: '7', times: 2 });

    const statuses = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await send(regionUrl(simulator()));
      statuses.push([response.status, response.headers['retry-after']]);
    }

    expect(statuses).toEqual([
      [503, '7'],
      [503, '7'],
      [200, undefined],
    ]);
    expect(simulator().requestsTo('region').map((request) => request.status)).toEqual([503, 503, 200]);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('answers a service error envelope with HTTP 200 and leaves the code unspent', async () => {
    simulator().injectFault('login', { serviceCode: 9002, msg: 'too many attempts' });

    const faulted = await login(simulator());

    expect(faulted.status).toBe(200);
    expect(json(faulted)).toEqual({ code: 9002, msg: 'too many attempts', data: null });
    expect(simulator().issuedTokens).toEqual([]);
    expect(json(await login(simulator()))).toMatchObject({ code: 200 });
  });

  it('still judges a faulted request and records its problems', async () => {
    simulator().injectFault('login', { status: 500 });

    const response = await login(simulator(), { body: loginForm({ country: 'de' }) });

    expect(response.status).toBe(500);
    expect(simulator().invalidRequests()).toEqual([expect.objectContaining({ status: 500, problems: ['country must be 2 uppercase letters'] })]);
  });

  it('resets the connection without answering', async () => {
    const token = await signIn(simulator());
    simulator().injectFault('register', { reset: true });

    await expect(register(simulator(), token)).rejects.toThrow();

    expect(simulator().requestsTo('register')).toEqual([expect.objectContaining({ status: 0, problems: [] })]);
    expect(simulator().pushToken).toBeUndefined();
  });

  it('delays the normal answer by delayMs', async () => {
    const token = await signIn(simulator());
    await register(simulator(), token);
    simulator().injectFault('subscribe', { delayMs: 300 });

    const started = performance.now();
    const response = await subscribe(simulator(), token, '42');

    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(response.status).toBe(200);
    expect(simulator().subscribedDoorbells.has('42')).toBe(true);
  });

  it('answers a raw malformed body with its content type', async () => {
    simulator().injectFault('region', { rawBody: '<html>bad gateway</html>', contentType: 'text/html' });

    const response = await send(regionUrl(simulator()));

    expect(response).toMatchObject({ status: 200, text: '<html>bad gateway</html>' });
    expect(response.headers['content-type']).toBe('text/html');
  });

  it('applies faults in the order injected and forgets them on clearFaults()', async () => {
    simulator().injectFault('region', { status: 429 });
    simulator().injectFault('region', { status: 502 });
    expect((await send(regionUrl(simulator()))).status).toBe(429);

    simulator().clearFaults();

    expect((await send(regionUrl(simulator()))).status).toBe(200);
  });

  it('applies a fault with a deviceId to that doorbell\'s subscriptions alone', async () => {
    const token = await signIn(simulator());
    await register(simulator(), token);
    simulator().injectFault('subscribe', { status: 503, deviceId: '42', times: 2 });

    const statuses = [];
    for (const deviceId of ['7', '42', '7', '42', '42']) {
      statuses.push((await subscribe(simulator(), token, deviceId)).status);
    }

    expect(statuses).toEqual([200, 503, 200, 503, 200]);
  });

  it('does not spend a fault on a request its route does not serve', async () => {
    simulator().injectFault('login', { status: 503 });

    expect((await send(`${simulator().accountUrl}/api/v4/auth/email/login/code`)).status).toBe(404);
    expect((await login(simulator())).status).toBe(503);
  });

  it.each<[RouteName, Fault, string]>([
    ['subscribe', { serviceCode: 2010 }, 'serviceCode applies to the account routes only'],
    ['region', { status: 503, reset: true }, 'more than one outcome'],
    ['region', {}, 'needs status, serviceCode, reset, rawBody or delayMs'],
    ['region', { retryAfter: '1', delayMs: 5 }, 'retryAfter needs status'],
    ['login', { status: 99 }, 'status must be 200-599'],
    ['login', { status: 500, times: 0 }, 'times must be an integer >= 1'],
    ['register', { status: 500, deviceId: '7' }, 'deviceId applies to the subscribe route only'],
  ])('refuses a %s fault that cannot work: %j', (route, fault, message) => {
    expect(() => simulator().injectFault(route, fault)).toThrow(message);
  });
});
