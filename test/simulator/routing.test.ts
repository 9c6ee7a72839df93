import { describe, expect, it } from '@jest/globals';
import { useSimulator } from '../support/simulator.js';
import { json, send } from './http.js';
import { ACCOUNT, regionUrl, registrationBody, signIn } from './requests.js';

describe('simulator: routing and recording', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT] });

  it('answers 404 to an unknown path on every server and records it without a route', async () => {
    for (const base of [simulator().accountUrl, simulator().regionUrl, simulator().doorbellUrl]) {
      expect((await send(`${base}/api/v2/whatever`, { method: 'GET' })).status).toBe(404);
    }

    expect(simulator().invalidRequests().map((request) => [request.service, request.route, request.status])).toEqual([
      ['account', undefined, 404],
      ['region', undefined, 404],
      ['doorbell', undefined, 404],
    ]);
  });

  it('answers 405 with Allow to a known path with another method', async () => {
    const response = await send(`${simulator().doorbellUrl}/clients_api/device`, { method: 'PUT', body: registrationBody('http://127.0.0.1:9/p') });

    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('PATCH');
    expect(simulator().invalidRequests()).toEqual([expect.objectContaining({ route: 'register', status: 405 })]);
  });

  it('refuses a doorbell route sent to the account server', async () => {
    const response = await send(`${simulator().accountUrl}/clients_api/device`, { method: 'PATCH' });

    expect(response.status).toBe(404);
    expect(json(response).msg).toContain('belongs on the doorbell server');
  });

  it('refuses a body larger than 64 KiB with 413', async () => {
    const response = await send(`${simulator().doorbellUrl}/clients_api/device`, { method: 'PATCH', body: 'x'.repeat(70_000) });

    expect(response.status).toBe(413);
    expect(simulator().invalidRequests()).toHaveLength(1);
  });

  it('records method, path, raw query, lower-cased headers and body in arrival order', async () => {
    await send(regionUrl(simulator()), { headers: { 'X-Trace': 'one' } });
    await send(`${simulator().doorbellUrl}/clients_api/doorbots/1/motions_subscribe`, { body: '' });

    const [region, subscription] = simulator().requests;
    expect(region).toMatchObject({ service: 'account', route: 'region', method: 'POST', rawQuery: expect.stringContaining('needtwostepauth=false') });
    expect(region.headers['x-trace']).toBe('one');
    expect(subscription).toMatchObject({ service: 'doorbell', route: 'subscribe', path: '/clients_api/doorbots/1/motions_subscribe', rawQuery: '', body: '' });
  });

  it('forgets recorded requests on reset() but keeps tokens and accounts', async () => {
    const token = await signIn(simulator());

    simulator().reset();

    expect(simulator().requests).toEqual([]);
    expect(simulator().issuedTokens).toEqual([token]);
    expect(json(await send(regionUrl(simulator())))).toMatchObject({ code: 200 });
  });

  it('adds accounts at run time, and a replaced account gets a fresh code', async () => {
    await signIn(simulator());
    simulator().addAccount(ACCOUNT);

    expect(await signIn(simulator())).toEqual(expect.any(String));
    expect(simulator().issuedTokens).toHaveLength(2);
  });
});
