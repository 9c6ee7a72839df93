import { describe, expect, it } from '@jest/globals';
import { SAMPLE_DEVICES } from '../../simulator/index.js';
import { DoorbellClient } from '../../src/cloud/doorbell.js';
import { MAX_ANSWER_BYTES } from '../../src/cloud/http.js';
import { cloudFailure, doorbellClient, LARGEST_DEVICE_ID, NON_LOOPBACK_HTTP, REGISTRATION, registeredDoorbellClient, signIn, useSimulator } from './cloud-helpers.js';

describe('DoorbellClient', () => {
  const context = useSimulator({ doorbells: ['1234567', LARGEST_DEVICE_ID, '9007199254740993'] });

  it('registers for push with the bearer token and the exact JSON body', async () => {
    const token = await signIn(context);

    await doorbellClient(context, token).registerPushDevice(REGISTRATION);

    const [request] = context.sim.requestsTo('register');
    expect(request).toMatchObject({ service: 'doorbell', method: 'PATCH', path: '/clients_api/device' });
    expect(request.headers.authorization).toBe(`Bearer ${token}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.body).toBe(
      '{"device":{"metadata":{"pn_dict_version":"2.0.0","pn_service":"webhook"},"os":"linux",' +
        '"push_notification_token":"http://127.0.0.1:47850/push/receiver-secret-f00d"}}',
    );
    expect(context.sim.pushToken).toBe(REGISTRATION.token);
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it.each([LARGEST_DEVICE_ID, '9007199254740993', '1234567'])('subscribes to motion of doorbell %s, digit for digit', async (deviceId) => {
    const client = await registeredDoorbellClient(context);

    await client.subscribeToMotion(deviceId);

    const [request] = context.sim.requestsTo('subscribe');
    expect(request).toMatchObject({ method: 'POST', path: `/clients_api/doorbots/${deviceId}/motions_subscribe`, body: '' });
    expect(request.headers.authorization).toBe(`Bearer ${context.sim.issuedTokens[0]}`);
    expect(request.headers['content-type']).toBeUndefined();
    expect(context.sim.subscribedDoorbells.has(deviceId)).toBe(true);
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it.each([['0'], ['-1'], ['01'], ['9223372036854775808'], ['1e3'], [' 1'], ['12/../34'], [1234567]])(
    'refuses device id %p before sending anything',
    async (deviceId) => {
      const client = await registeredDoorbellClient(context);

      await expect(client.subscribeToMotion(deviceId as string)).rejects.toThrow(RangeError);
      expect(context.sim.requestsTo('subscribe')).toHaveLength(0);
    },
  );

  it('reads 401 as an invalid session, asked once', async () => {
    const token = await signIn(context);
    context.sim.revokeToken(token);

    const error = await cloudFailure(doorbellClient(context, token).registerPushDevice(REGISTRATION), 'unauthorized');

    expect(error).toMatchObject({ status: 401, sessionInvalid: true, retryable: false });
    expect(error.message).toContain('HTTP 401: the access token is not accepted');
    expect(context.sim.requestsTo('register')).toHaveLength(1);
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it('does not retry a doorbell the service does not know (404)', async () => {
    const client = await registeredDoorbellClient(context);

    const error = await cloudFailure(client.subscribeToMotion('7654321'), 'http');

    expect(error).toMatchObject({ status: 404, retryable: false, sessionInvalid: false });
    expect(error.message).toBe('POST /clients_api/doorbots/7654321/motions_subscribe failed: HTTP 404');
    expect(context.sim.requestsTo('subscribe')).toHaveLength(1);
  });

  it('accepts any 2xx, empty bodies included', async () => {
    const client = await registeredDoorbellClient(context);
    context.sim.injectFault('subscribe', { status: 202 });
    context.sim.injectFault('register', { status: 200 });

    await expect(client.subscribeToMotion('1234567')).resolves.toBeUndefined();
    await expect(client.registerPushDevice(REGISTRATION)).resolves.toBeUndefined();
  });

  it.each([NON_LOOPBACK_HTTP, 'http://127.0.0.1.nip.io', 'http://localhost.example.com', 'ftp://127.0.0.1', 'not a url'])(
    'refuses to send the token to %s',
    async (serverUrl) => {
      const client = doorbellClient(context, 'secret-bearer-token', serverUrl);

      const registration = await cloudFailure(client.registerPushDevice(REGISTRATION), 'insecure');
      const subscription = await cloudFailure(client.subscribeToMotion('1234567'), 'insecure');

      expect(registration.message).toContain('use an https:// address');
      expect(subscription.serviceAnswered).toBe(false);
      expect(context.logger.lines).toEqual([]);
    },
  );

  it.each(['http://localhost:9', 'http://[::1]:9', 'http://127.45.6.7:9', 'https://127.0.0.1:9'])(
    'allows %s (loopback, or https)',
    async (serverUrl) => {
      const client = new DoorbellClient({ serverUrl, accessToken: 'secret-bearer-token', retry: { retries: 0 } });

      // Nothing listens there: getting as far as the network shows the address was allowed.
      await cloudFailure(client.subscribeToMotion('1234567'), 'network');
    },
  );
});

/**
 * The account's device list over real HTTP against the simulator: doorbells from the three lists that
 * hold them, ids digit for digit, bad entries skipped one by one, and what 401, 404 and 405 mean.
 */
describe('DoorbellClient.listDoorbells', () => {
  const context = useSimulator({ devices: [...SAMPLE_DEVICES] });

  it("lists the account's own, shared and camera doorbells, never the chime, with every digit of each id", async () => {
    const token = await signIn(context);

    const answer = await doorbellClient(context, token).listDoorbells();

    expect(answer).toEqual({
      offered: true,
      doorbells: [
        { deviceId: '1234567', name: 'Front Door', kind: 'lpd_v2', list: 'doorbots', battery: 15, online: true },
        { deviceId: '7654321', name: "Neighbour's Door", kind: 'doorbell_v3', list: 'authorized_doorbots', battery: 87.6, online: false },
        { deviceId: '9007199254740993', name: 'Garage', kind: 'stickup_cam_v4', list: 'stickup_cams', battery: null, online: true },
      ],
      // An id that is not a number, one past the int64 range, and none at all.
      skipped: 3,
    });
    const [request] = context.sim.requestsTo('devices');
    expect(request).toMatchObject({ method: 'GET', path: '/clients_api/ring_devices', rawQuery: '', body: '' });
    expect(request.headers.authorization).toBe(`Bearer ${token}`);
    expect(request.headers['content-type']).toBeUndefined();
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it.each([
    ['a list that is not an array, and entries that are not objects', '{"doorbots":{"id":1},"stickup_cams":[null,5,"x",{"id":42}]}', ['42'], 3],
    ['no lists at all', '{"chimes":[{"id":7}]}', [], 0],
    ['a doorbell both own and shared, kept once, and an id as a decimal string', '{"doorbots":[{"id":"8"}],"authorized_doorbots":[{"id":8}]}', ['8'], 0],
    ['ids written as numbers that are not integers', '{"doorbots":[{"id":1.5},{"id":1e3},{"id":-4},{"id":0},{"id":9}]}', ['9'], 4],
  ])('tolerates %s, entry by entry', async (_what, rawBody, deviceIds, skipped) => {
    const client = doorbellClient(context, await signIn(context));
    context.sim.injectFault('devices', { rawBody });

    const answer = await client.listDoorbells();

    expect(answer.offered && answer.doorbells.map(({ deviceId }) => deviceId)).toEqual(deviceIds);
    expect(answer.offered && answer.skipped).toBe(skipped);
  });

  it('reads a battery from 0 to 100, as a number or a decimal string, null as none, and anything else as not said; a connection only as online or offline', async () => {
    const client = doorbellClient(context, await signIn(context));
    const entries = [
      '{"id":1,"battery_life":0,"alerts":{"connection":"offline"}}',
      '{"id":2,"battery_life":100,"alerts":{"connection":"online"}}',
      '{"id":3,"battery_life":" 42.5 ","alerts":{"connection":"sleeping"}}',
      '{"id":4,"battery_life":null,"alerts":null}',
      '{"id":5,"battery_life":100.5,"alerts":"offline"}',
      '{"id":6,"battery_life":-1}',
      '{"id":7,"battery_life":"ok"}',
      '{"id":8,"battery_life":"1e2"}',
      '{"id":9,"battery_life":true,"alerts":{"connection":"OFFLINE"}}',
      '{"id":10,"battery_life":{"level":50}}',
    ];
    context.sim.injectFault('devices', { rawBody: `{"doorbots":[${entries.join(',')}]}` });

    const answer = await client.listDoorbells();

    expect(answer.offered && answer.doorbells.map(({ deviceId, battery, online }) => ({ deviceId, battery, online }))).toEqual([
      { deviceId: '1', battery: 0, online: false },
      { deviceId: '2', battery: 100, online: true },
      { deviceId: '3', battery: 42.5, online: undefined },
      { deviceId: '4', battery: null, online: undefined },
      ...['5', '6', '7', '8', '9', '10'].map((deviceId) => ({ deviceId, battery: undefined, online: undefined })),
    ]);
    expect(answer.offered && answer.doorbells.filter((doorbell) => 'battery' in doorbell || 'online' in doorbell).map(({ deviceId }) => deviceId)).toEqual(['1', '2', '3', '4']);
  });

  it('names a doorbell without a description after its id, and leaves out a kind it was not given', async () => {
    const client = doorbellClient(context, await signIn(context));
    context.sim.injectFault('devices', { rawBody: '{"doorbots":[{"id":9223372036854775807,"description":"  "}]}' });

    expect(await client.listDoorbells()).toEqual({
      offered: true,
      doorbells: [{ deviceId: '9223372036854775807', name: 'Doorbell 9223372036854775807', list: 'doorbots' }],
      skipped: 0,
    });
  });

  it('reads 404 as a service without the list, not a failure', async () => {
    const token = await signIn(context);
    context.sim.setDeviceListMode('not-offered');

    expect(await doorbellClient(context, token).listDoorbells()).toEqual({ offered: false });
    expect(context.sim.requestsTo('devices').map(({ status }) => status)).toEqual([404]);
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it('reads 405 the same way', async () => {
    const client = doorbellClient(context, await signIn(context));
    context.sim.injectFault('devices', { status: 405 });

    expect(await client.listDoorbells()).toEqual({ offered: false });
  });

  it('reads 401 as a session no longer valid, asked once', async () => {
    const token = await signIn(context);
    context.sim.setDeviceListMode('unauthorized');

    const error = await cloudFailure(doorbellClient(context, token).listDoorbells(), 'unauthorized');

    expect(error).toMatchObject({ status: 401, sessionInvalid: true, retryable: false });
    expect(context.sim.requestsTo('devices')).toHaveLength(1);
  });

  it('retries a busy service, then lists', async () => {
    const client = doorbellClient(context, await signIn(context));
    context.sim.injectFault('devices', { status: 503, times: 2 });

    const answer = await client.listDoorbells();

    expect(answer.offered && answer.doorbells).toHaveLength(3);
    expect(context.sim.requestsTo('devices').map(({ status }) => status)).toEqual([503, 503, 200]);
  });

  it.each(['<html>busy</html>', '[]', '', 'null'])('calls an answer that is not a JSON object (%p) malformed', async (rawBody) => {
    const client = doorbellClient(context, await signIn(context));
    context.sim.injectFault('devices', { rawBody });

    const error = await cloudFailure(client.listDoorbells(), 'malformed');

    expect(error.message).toBe('GET /clients_api/ring_devices failed: HTTP 200 with a response that is not what the service sends (not a JSON object)');
  });

  it('reads the list of an account with very many doorbells, every key the service adds included', async () => {
    const client = doorbellClient(context, await signIn(context));
    const rawBody = deviceList(3_500);
    expect(rawBody.length).toBeGreaterThan(MAX_ANSWER_BYTES * 0.8);
    expect(rawBody.length).toBeLessThan(MAX_ANSWER_BYTES);
    context.sim.injectFault('devices', { rawBody });

    const answer = await client.listDoorbells();

    expect(answer.offered && answer.doorbells).toHaveLength(3_500);
  });

  it('cuts off an answer larger than 1 MiB, which no service sends, with a clear error, and asks once', async () => {
    const client = doorbellClient(context, await signIn(context));
    context.sim.injectFault('devices', { rawBody: deviceList(5_000), times: 5 });

    const error = await cloudFailure(client.listDoorbells(), 'too-large');

    expect(error.message).toBe('GET /clients_api/ring_devices failed: an answer larger than 1 MiB, far more than the service sends; it was not read');
    expect(error.retryable).toBe(false);
    expect(context.sim.requestsTo('devices')).toHaveLength(1);
  });

  it('never sends the token over plain http to another host', async () => {
    await cloudFailure(doorbellClient(context, 'secret-bearer-token', NON_LOOPBACK_HTTP).listDoorbells(), 'insecure');
  });
});

/** A device list of `count` doorbells, each with the many keys a real list carries (about 270 bytes each). */
function deviceList(count: number): string {
  const doorbells = Array.from({ length: count }, (_, index) => ({
    id: 100_000 + index,
    description: `Doorbell ${index}`,
    kind: 'lpd_v2',
    device_id: `a1b2c3d4e5f6${String(index).padStart(6, '0')}`,
    time_zone: 'America/New_York',
    firmware_version: 'Up to Date',
    features: { motions_enabled: true, show_recordings: true },
    settings: { chime_settings: { type: 1, enable: true } },
  }));
  return JSON.stringify({ doorbots: doorbells, authorized_doorbots: [], stickup_cams: [], chimes: [] });
}
