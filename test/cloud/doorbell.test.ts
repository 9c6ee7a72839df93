import { describe, expect, it } from '@jest/globals';
import { DoorbellClient } from '../../src/cloud/doorbell.js';
import {
  cloudFailure,
  doorbellClient,
  LARGEST_DEVICE_ID,
  NON_LOOPBACK_HTTP,
  REGISTRATION,
  registeredDoorbellClient,
  signIn,
  useSimulator,
} from './cloud-helpers.js';

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
