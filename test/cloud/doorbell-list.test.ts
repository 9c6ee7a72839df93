/**
 * The account's device list over real HTTP against the simulator: doorbells from the three lists that
 * hold them, ids digit for digit, bad entries skipped one by one, and what 401, 404 and 405 mean.
 */
import { describe, expect, it } from '@jest/globals';
import { SAMPLE_DEVICES } from '../../simulator/index.js';
import { MAX_ANSWER_BYTES } from '../../src/cloud/http.js';
import { cloudFailure, doorbellClient, NON_LOOPBACK_HTTP, signIn, useSimulator } from './cloud-helpers.js';

describe('DoorbellClient.listDoorbells', () => {
  const context = useSimulator({ devices: [...SAMPLE_DEVICES] });

  it("lists the account's own, shared and camera doorbells, never the chime, with every digit of each id", async () => {
    const token = await signIn(context);

    const answer = await doorbellClient(context, token).listDoorbells();

    expect(answer).toEqual({
      offered: true,
      doorbells: [
        { deviceId: '1234567', name: 'Front Door', kind: 'lpd_v2', list: 'doorbots' },
        { deviceId: '7654321', name: "Neighbour's Door", kind: 'doorbell_v3', list: 'authorized_doorbots' },
        { deviceId: '9007199254740993', name: 'Garage', kind: 'stickup_cam_v4', list: 'stickup_cams' },
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
