import { beforeEach, describe, expect, it, afterEach } from '@jest/globals';
import { SAMPLE_DEVICES, startSimulator, DeliveryError } from '../../simulator/index.js';
import type { Simulator } from '../../simulator/index.js';
import { useSimulator } from '../support/each-test.js';
import { json, send, startReceiver, ACCOUNT, register, registrationBody, signIn, subscribe } from './requests.js';
import type { SendOptions, Receiver } from './requests.js';

const device = { metadata: { pn_dict_version: '2.0.0', pn_service: 'webhook' }, os: 'linux', push_notification_token: 'http://127.0.0.1:9/push/s' };

describe('simulator: doorbell routes', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT], doorbells: ['1234567', '9007199254740993', '9223372036854775807'] });
  let token: string;

  beforeEach(async () => {
    token = await signIn(simulator());
  });

  it('registers a push token: 204 with an empty body', async () => {
    const response = await register(simulator(), token, registrationBody('http://127.0.0.1:47850/push/abc'));

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(simulator().pushToken).toBe('http://127.0.0.1:47850/push/abc');
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('subscribes to motion after a registration: 200 with an empty body, ids kept exact', async () => {
    await register(simulator(), token);

    for (const id of ['9007199254740993', '9223372036854775807']) {
      const response = await subscribe(simulator(), token, id);
      expect(response.status).toBe(200);
      expect(response.text).toBe('');
    }
    expect([...simulator().subscribedDoorbells]).toEqual(['9007199254740993', '9223372036854775807']);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('answers 401 for an unknown or revoked token, which is not a problem of the request', async () => {
    expect((await register(simulator(), 'not-a-token')).status).toBe(401);
    simulator().revokeToken(token);
    const revoked = await register(simulator(), token);

    expect(revoked.status).toBe(401);
    expect(revoked.headers['www-authenticate']).toBe('Bearer');
    expect(json(revoked).reason).toBe('access token is unknown or revoked: sign in again');
    expect(simulator().pushToken).toBeUndefined();
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('answers 404 for a doorbell the account does not have, which is not a problem either', async () => {
    await register(simulator(), token);

    expect((await subscribe(simulator(), token, '7654321')).status).toBe(404);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  const registrationViolations: Array<[string, unknown, number, string]> = [
    ['an extra top-level key', { device, extra: 1 }, 400, 'body has unexpected key "extra"'],
    ['an extra metadata key', { device: { ...device, metadata: { ...device.metadata, x: 'y' } } }, 400, 'body.device.metadata has unexpected key "x"'],
    ['a missing os', { device: { ...device, os: undefined } }, 400, 'body.device is missing os'],
    ['an empty pn_service', { device: { ...device, metadata: { ...device.metadata, pn_service: '' } } }, 400, 'pn_service must be a non-empty string'],
    ['a number as version', { device: { ...device, metadata: { ...device.metadata, pn_dict_version: 2 } } }, 400, 'pn_dict_version must be a non-empty string'],
    ['a push token that is no URL', { device: { ...device, push_notification_token: 'abc' } }, 400, 'must be an absolute http(s) URL'],
    ['a push token of another scheme', { device: { ...device, push_notification_token: 'ftp://127.0.0.1/x' } }, 400, 'must be an absolute http(s) URL'],
    ['an array body', [device], 400, 'body must be an object'],
  ];

  it.each(registrationViolations)('refuses a registration with %s and records it', async (_name, body, status, problem) => {
    const response = await register(simulator(), token, JSON.stringify(body));

    expect(response.status).toBe(status);
    expect(json(response).problems).toEqual(expect.arrayContaining([expect.stringContaining(problem)]));
    expect(simulator().invalidRequests()[0].problems.join('\n')).toContain(problem);
    expect(simulator().pushToken).toBeUndefined();
  });

  it.each([
    ['no JSON', registrationBody('http://127.0.0.1:9/p').slice(1), 'application/json', 400, 'body must be JSON'],
    ['another content type', registrationBody('http://127.0.0.1:9/p'), 'text/plain', 415, 'Content-Type must be application/json'],
  ])('refuses a registration with %s', async (_name, body, contentType, status, problem) => {
    const response = await register(simulator(), token, body, contentType);

    expect(response.status).toBe(status);
    expect(simulator().invalidRequests()[0].problems).toEqual([problem]);
  });

  it.each([
    ['no Authorization header', {}, 'missing Authorization header'],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'Authorization must be "Bearer <access token>"'],
    ['an empty bearer', { authorization: 'Bearer ' }, 'Authorization must be "Bearer <access token>"'],
  ])('answers 401 to %s and records it', async (_name, headers, problem) => {
    const response = await send(`${simulator().doorbellUrl}/clients_api/device`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...headers },
      body: registrationBody('http://127.0.0.1:9/p'),
    });

    expect(response.status).toBe(401);
    expect(simulator().invalidRequests()[0].problems).toEqual([problem]);
  });

  it.each([
    ['2^63', '9223372036854775808'],
    ['zero', '0'],
    ['a leading zero', '01234567'],
    ['a sign', '-1'],
    ['an exponent', '1e6'],
    ['an encoded digit', '%31'],
  ])('refuses a subscription to device id %s with 400', async (_name, id) => {
    await register(simulator(), token);

    const response = await subscribe(simulator(), token, id);

    expect(response.status).toBe(400);
    expect(simulator().invalidRequests()[0].problems).toEqual(['device_id must be a decimal integer from 1 to 9223372036854775807']);
    expect(simulator().subscribedDoorbells.size).toBe(0);
  });

  it('refuses a subscription with a body', async () => {
    await register(simulator(), token);

    const response = await subscribe(simulator(), token, '1234567', { headers: { 'content-type': 'application/json' }, body: '{}' });

    expect(response.status).toBe(400);
    expect(simulator().invalidRequests()[0].problems).toEqual(['this request takes no body (send Content-Length: 0 or none)']);
  });

  it('refuses a subscription before any push registration of that token', async () => {
    const response = await subscribe(simulator(), token, '1234567');

    expect(response.status).toBe(400);
    expect(json(response).reason).toBe('register a push token (PATCH /clients_api/device) before subscribing');
    expect(simulator().invalidRequests()).toHaveLength(1);
  });
});

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

  it("changes a doorbell's battery and connection through the control API, a key left out staying as it was", async () => {
    const control = (id: string, body: string) => send(`${simulator().doorbellUrl}/__simulator/doorbells/${id}`, { method: 'PUT', body });

    expect((await control('1234567', '{"battery_life":"15.5","connection":"offline"}')).status).toBe(200);
    expect((await listDevices(simulator(), token)).text).toContain('"id":1234567,"description":"Front Door","kind":"lpd_v2","device_id":"dev-1234567","battery_life":"15.5","alerts":{"connection":"offline"');
    expect((await control('1234567', '{"battery_life":null}')).status).toBe(200);
    expect((await listDevices(simulator(), token)).text).toContain('"battery_life":null,"alerts":{"connection":"offline"');
    expect((await control('1234567', '{"connection":"online"}')).status).toBe(200);
    expect((await listDevices(simulator(), token)).text).toContain('"battery_life":null,"alerts":{"connection":"online"');

    expect((await control('5550002', '{"battery_life":50}')).status).toBe(404);
    expect((await control('1234567', '{"connection":"asleep"}')).status).toBe(400);
    expect((await control('1234567', '{"battery":50}')).status).toBe(400);
    expect((await send(`${simulator().doorbellUrl}/__simulator/doorbells/1234567`, { method: 'GET' })).status).toBe(405);
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

describe('simulator: deliverMotion', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT] });
  let receiver: Receiver;
  let token: string;

  beforeEach(async () => {
    receiver = await startReceiver();
    token = await signIn(simulator());
  });

  afterEach(async () => {
    await receiver.close();
  });

  it('POSTs the flat motion notification with the device id as an exact JSON integer', async () => {
    await register(simulator(), token, registrationBody(receiver.pushToken));

    const result = await simulator().deliverMotion('9007199254740993');

    expect(result).toEqual({ status: 202, body: '{"accepted":true}' });
    const [delivery] = receiver.deliveries;
    expect(delivery).toMatchObject({ method: 'POST', path: '/push/receiver-secret' });
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.body).toMatch(
      /^\{"device_id":9007199254740993,"kind":"motion","id":"evt-[0-9a-f-]{36}","created_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"\}$/,
    );
  });

  it('sends the given id, kind and subtype, or a raw body verbatim', async () => {
    await register(simulator(), token, registrationBody(receiver.pushToken));

    await simulator().deliverMotion('1234567', { id: 'evt-2', subtype: 'vehicle' });
    await simulator().deliverMotion('1234567', { id: 'evt-1', kind: 'ding' });
    await simulator().deliverMotion('1234567', { rawBody: '{"ding":{"doorbot_id":1234567,"kind":"motion"}}' });

    expect(receiver.deliveries[0].body).toMatch(/^\{"device_id":1234567,"kind":"motion","subtype":"vehicle","id":"evt-2",/);
    expect(receiver.deliveries[1].body).toMatch(/^\{"device_id":1234567,"kind":"ding","id":"evt-1",/);
    expect(receiver.deliveries[2].body).toBe('{"ding":{"doorbot_id":1234567,"kind":"motion"}}');
  });

  it('rejects when no push token is registered', async () => {
    await expect(simulator().deliverMotion('1234567')).rejects.toThrow(DeliveryError);
  });

  it('rejects a device id that is not an int64 decimal', async () => {
    await register(simulator(), token, registrationBody(receiver.pushToken));

    await expect(simulator().deliverMotion('9223372036854775808')).rejects.toMatchObject({ failure: 'bad-device-id' });
    expect(receiver.deliveries).toEqual([]);
  });

  it('refuses to send to a push token outside loopback', async () => {
    await register(simulator(), token, registrationBody('http://192.0.2.1:47850/push/secret'));

    await expect(simulator().deliverMotion('1234567')).rejects.toMatchObject({ name: 'DeliveryError', failure: 'not-loopback' });
  });

  it('reports status 0 when the receiver cannot be reached', async () => {
    await register(simulator(), token, registrationBody(receiver.pushToken));
    await receiver.close();

    expect(await simulator().deliverMotion('1234567')).toEqual({ status: 0, body: '' });
  });
});

describe('simulator: control API', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT] });
  let receiver: Receiver;
  let motionUrl: (deviceId: string) => string;

  beforeEach(async () => {
    receiver = await startReceiver(202, '');
    motionUrl = (deviceId) => `${simulator().doorbellUrl}/__simulator/motion/${deviceId}`;
  });

  afterEach(async () => {
    await receiver.close();
  });

  it('answers 409 to a motion request while no push token is registered', async () => {
    const response = await send(motionUrl('1234567'));

    expect(response.status).toBe(409);
    expect(json(response).reason).toContain('no push token is registered');
  });

  it('delivers motion and answers the receiver reply, without recording the control request', async () => {
    await register(simulator(), await signIn(simulator()), registrationBody(receiver.pushToken));
    const recorded = simulator().requests.length;

    const response = await send(motionUrl('9007199254740993'));

    expect(response.status).toBe(200);
    expect(json(response)).toEqual({ status: 202, body: '', deliveries: [{ account: ACCOUNT.email, status: 202, body: '' }] });
    expect(receiver.deliveries[0].body).toContain('"device_id":9007199254740993,');
    expect(simulator().requests).toHaveLength(recorded);
  });

  it('passes id, kind, subtype and rawBody from a JSON body through', async () => {
    await register(simulator(), await signIn(simulator()), registrationBody(receiver.pushToken));

    await send(motionUrl('1234567'), { body: JSON.stringify({ id: '7', kind: 'ding' }) });
    await send(motionUrl('1234567'), { body: JSON.stringify({ id: '8', subtype: 'human' }) });

    expect(receiver.deliveries[0].body).toMatch(/^\{"device_id":1234567,"kind":"ding","id":"7",/);
    expect(receiver.deliveries[1].body).toMatch(/^\{"device_id":1234567,"kind":"motion","subtype":"human","id":"8",/);
  });

  it.each([
    ['a device id beyond int64', '9223372036854775808', ''],
    ['options that are not strings', '1234567', '{"id":7}'],
    ['unknown options', '1234567', '{"color":"red"}'],
    ['a body that is no JSON', '1234567', 'motion'],
  ])('answers 400 to %s', async (_name, deviceId, body) => {
    await register(simulator(), await signIn(simulator()), registrationBody(receiver.pushToken));

    expect((await send(motionUrl(deviceId), { body })).status).toBe(400);
    expect(receiver.deliveries).toEqual([]);
  });

  it('reports the state with the push token masked except its origin', async () => {
    const token = await signIn(simulator());
    await register(simulator(), token, registrationBody(receiver.pushToken));
    await subscribe(simulator(), token, '9007199254740993');
    await send(`${simulator().doorbellUrl}/nowhere`);

    const response = await send(`${simulator().doorbellUrl}/__simulator/state`, { method: 'GET' });

    expect(response.status).toBe(200);
    expect(response.text).not.toContain('receiver-secret');
    expect(json(response)).toEqual({
      pushToken: `${new URL(receiver.pushToken).origin}/***`,
      subscribedDoorbells: ['9007199254740993'],
      deviceListMode: 'offered',
      requestCounts: { region: 0, login: 1, register: 1, subscribe: 1, devices: 0, unrouted: 1 },
      invalidRequests: 1,
    });
  });

  it('answers 405 to a wrong method and 404 to an unknown control path', async () => {
    const wrongMethod = await send(`${simulator().doorbellUrl}/__simulator/state`, { method: 'POST' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET');
    expect((await send(`${simulator().doorbellUrl}/__simulator/nothing`, { method: 'GET' })).status).toBe(404);
    expect(simulator().requests).toEqual([]);
  });

  it('is offered on the doorbell server only', async () => {
    expect((await send(`${simulator().accountUrl}/__simulator/state`, { method: 'GET' })).status).toBe(404);
    expect(simulator().invalidRequests()).toHaveLength(1);
  });
});
