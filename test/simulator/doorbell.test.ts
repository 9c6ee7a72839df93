import { beforeEach, describe, expect, it } from '@jest/globals';
import { useSimulator } from '../support/simulator.js';
import { json, send } from './http.js';
import { ACCOUNT, register, registrationBody, signIn, subscribe } from './requests.js';

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
