import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DeliveryError } from '../../simulator/index.js';
import { useSimulator } from '../support/simulator.js';
import { startReceiver } from './receiver.js';
import type { Receiver } from './receiver.js';
import { ACCOUNT, register, registrationBody, signIn } from './requests.js';

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
