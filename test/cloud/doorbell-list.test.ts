/**
 * The account's device list over real HTTP against the simulator: doorbells from the three lists that
 * hold them, ids digit for digit, bad entries skipped one by one, and what 401, 404 and 405 mean.
 */
import { describe, expect, it } from '@jest/globals';
import { SAMPLE_DEVICES } from '../../simulator/index.js';
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

  it('never sends the token over plain http to another host', async () => {
    await cloudFailure(doorbellClient(context, 'secret-bearer-token', NON_LOOPBACK_HTTP).listDoorbells(), 'insecure');
  });
});
