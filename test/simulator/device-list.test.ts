import { beforeEach, describe, expect, it } from '@jest/globals';
import { SAMPLE_DEVICES, startSimulator } from '../../simulator/index.js';
import type { Simulator } from '../../simulator/index.js';
import { useSimulator } from '../support/simulator.js';
import { json, send } from './http.js';
import type { SendOptions } from './http.js';
import { ACCOUNT, signIn } from './requests.js';

function listDevices(simulator: Simulator, token: string, { method = 'GET', headers = {}, body }: SendOptions = {}, query = ''): Promise<ReturnType<typeof send> extends Promise<infer R> ? R : never> {
  return send(`${simulator.doorbellUrl}/clients_api/ring_devices${query}`, { method, body, headers: { authorization: `Bearer ${token}`, ...headers } });
}

describe('simulator: the device list', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT], devices: [...SAMPLE_DEVICES] });
  let token: string;

  beforeEach(async () => {
    token = await signIn(simulator());
  });

  it('answers every list of the account, ids as JSON integers digit for digit, with keys a client does not read', async () => {
    const response = await listDevices(simulator(), token);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(json(response))).toEqual(['doorbots', 'authorized_doorbots', 'stickup_cams', 'chimes', 'base_stations']);
    expect(response.text).toContain('{"id":9007199254740993,"description":"Garage","kind":"stickup_cam_v4","device_id":"dev-9007199254740993",');
    expect(response.text).toContain('{"id":5550001,"description":"Hallway Chime"');
    expect(response.text).toContain('{"id":9223372036854775808,"description":"Out of range","kind":"lpd_v2"}');
    expect((json(response).doorbots as unknown[]).length).toBe(3);
    expect(simulator().requestsTo('devices')).toHaveLength(1);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it.each<[string, SendOptions, string, number, string]>([
    ['no Authorization', { headers: { authorization: undefined } }, '', 401, 'missing Authorization header'],
    // Node sends a GET's body with neither length nor chunks unless told: the server would read it as a request.
    ['a body', { body: '{}', headers: { 'content-length': '2' } }, '', 400, 'this request takes no body (send Content-Length: 0 or none)'],
    ['a query', {}, '?limit=10', 400, 'the device list takes no query'],
  ])('refuses a request with %s as a problem', async (_what, options, query, status, problem) => {
    const headers = Object.fromEntries(Object.entries({ authorization: `Bearer ${token}`, ...options.headers }).filter(([, value]) => value !== undefined));
    const response = await send(`${simulator().doorbellUrl}/clients_api/ring_devices${query}`, { method: 'GET', body: options.body, headers });

    expect(response.status).toBe(status);
    expect(simulator().invalidRequests().map(({ problems }) => problems)).toEqual([[problem]]);
  });

  it('answers another method 405 as a problem', async () => {
    const response = await listDevices(simulator(), token, { method: 'POST' });

    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET');
    expect(simulator().invalidRequests()).toHaveLength(1);
  });

  it('answers 404 in the not-offered mode and 401 in the unauthorized mode, neither a problem of the request', async () => {
    simulator().setDeviceListMode('not-offered');
    expect((await listDevices(simulator(), token)).status).toBe(404);

    simulator().setDeviceListMode('unauthorized');
    const refused = await listDevices(simulator(), token);
    expect(refused.status).toBe(401);
    expect(json(refused).reason).toBe('access token is unknown or revoked: sign in again');

    simulator().setDeviceListMode('offered');
    expect((await listDevices(simulator(), token)).status).toBe(200);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('answers 401 for a revoked token', async () => {
    simulator().revokeToken(token);

    expect((await listDevices(simulator(), token)).status).toBe(401);
  });

  it('switches the mode through the control API, and shows it in the state', async () => {
    const control = (body: string) => send(`${simulator().doorbellUrl}/__simulator/device-list`, { method: 'PUT', body });

    const switched = await control('{"mode":"not-offered"}');
    expect(switched.status).toBe(200);
    expect(json(switched).deviceListMode).toBe('not-offered');
    expect((await listDevices(simulator(), token)).status).toBe(404);

    expect((await control('{"mode":"gone"}')).status).toBe(400);
    expect((await send(`${simulator().doorbellUrl}/__simulator/device-list`, { method: 'GET' })).status).toBe(405);
    expect(json(await send(`${simulator().doorbellUrl}/__simulator/state`, { method: 'GET' })).deviceListMode).toBe('not-offered');
  });
});

describe('simulator: the device list options', () => {
  it("lists the configured doorbells as the account's own when no list is given", async () => {
    const simulator = await startSimulator({ accounts: [ACCOUNT], doorbells: ['42', '9223372036854775807'], deviceListMode: 'offered' });
    try {
      const response = await listDevices(simulator, await signIn(simulator));

      expect(response.text).toContain('"doorbots":[{"id":42,"description":"Doorbell 42"');
      expect(response.text).toContain('{"id":9223372036854775807,"description":"Doorbell 9223372036854775807"');
    } finally {
      await simulator.close();
    }
  });

  it.each([
    [{ list: 'doorbots' as const, id: '12a' }, 'simulated device id "12a" must be a decimal'],
    [{ list: 'doorbots' as const, rawEntry: '{oops' }, 'simulated device rawEntry "{oops" must be JSON text'],
    [{ list: 'sirens' as 'chimes', id: '1' }, 'simulated device list "sirens" must be one of'],
  ])('refuses %j', async (device, message) => {
    await expect(startSimulator({ devices: [device] })).rejects.toThrow(message);
  });
});
