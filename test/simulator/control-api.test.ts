import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { useSimulator } from '../support/simulator.js';
import { json, send } from './http.js';
import { startReceiver } from './receiver.js';
import type { Receiver } from './receiver.js';
import { ACCOUNT, register, registrationBody, signIn, subscribe } from './requests.js';

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
    expect(json(response)).toEqual({ status: 202, body: '' });
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
