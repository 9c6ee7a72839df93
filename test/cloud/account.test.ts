import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { APP_VERSION, PHONE_MODEL, PHONE_SYSTEM } from '../../src/cloud/account.js';
import { ACCOUNT, accountClient, CLIENT_ID, cloudFailure, loginParams, NON_LOOPBACK_HTTP, useSimulator } from './cloud-helpers.js';

const ENCODED_EMAIL = 'first.last%2Bdoorbell%40example.com';

describe('AccountClient.resolveRegion', () => {
  const context = useSimulator();

  it('sends the e-mail percent-encoded in the query, with no body and no Authorization', async () => {
    const region = await accountClient(context).resolveRegion(ACCOUNT.email);

    expect(region).toEqual({ url: context.sim.regionUrl, country: 'US', countrycode: '1' });
    const [request] = context.sim.requestsTo('region');
    expect(request).toMatchObject({ service: 'account', method: 'POST', path: '/api/v1/getUrlByEmail', body: '' });
    expect(request.rawQuery).toBe(`email=${ENCODED_EMAIL}&needtwostepauth=false`);
    expect(request.headers.authorization).toBeUndefined();
    expect(request.headers['content-type']).toBeUndefined();
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it('answers an unknown account with code 2008 and what it means', async () => {
    const error = await cloudFailure(accountClient(context).resolveRegion('nobody@example.com'), 'service');

    expect(error.serviceCode).toBe(2008);
    expect(error.message).toContain('there is no such account at this server');
    expect(context.sim.invalidRequests()).toEqual([]);
  });
});

describe('AccountClient.loginWithCode', () => {
  const context = useSimulator();

  it('posts the exact form, the code with its leading zero, and all seven client headers', async () => {
    const login = await accountClient(context).loginWithCode(loginParams(context.sim.regionUrl));

    expect(login.token).toBe(context.sim.issuedTokens[0]);
    const [request] = context.sim.requestsTo('login');
    expect(request).toMatchObject({ service: 'region', method: 'POST', path: '/api/v4/auth/email/login/code' });
    expect(request.body).toBe(`code=012345&country=US&countryCode=1&email=${ENCODED_EMAIL}&majorVersion=14&minorVersion=0`);
    expect(request.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded(;|$)/);
    expect(request.headers).toMatchObject({
      header_clientid: CLIENT_ID,
      header_clientlang: 'en',
      header_appversion: APP_VERSION,
      header_phonesystem: PHONE_SYSTEM,
      header_phonemodel: PHONE_MODEL,
    });
    expect(APP_VERSION).toBe('4.54.02');
    expect(request.headers.authorization).toBeUndefined();
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it('sends a new x-mercy-ks on every request, with x-mercy-k its SHA-256', async () => {
    const client = accountClient(context);
    context.sim.addAccount({ ...ACCOUNT, email: 'second@example.com' });
    await client.loginWithCode(loginParams(context.sim.regionUrl));
    await client.loginWithCode({ ...loginParams(context.sim.regionUrl), email: 'second@example.com' });

    const keys = context.sim.requestsTo('login').map((request) => ({ ks: request.headers['x-mercy-ks'], k: request.headers['x-mercy-k'] }));
    expect(keys).toHaveLength(2);
    expect(keys[0].ks).not.toBe(keys[1].ks);
    for (const { ks, k } of keys) {
      expect(ks).toMatch(/^[A-Za-z0-9]{16}$/);
      expect(k).toBe(createHash('sha256').update(String(ks)).digest('hex'));
    }
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it('returns the session fields, tolerating unknown keys at every level and dropping them', async () => {
    const login = await accountClient(context).loginWithCode(loginParams(context.sim.regionUrl));

    expect(login).toMatchObject({ token: expect.any(String), rruid: expect.any(String), uid: expect.any(Number), country: 'US' });
    expect(login.rriot).toMatchObject({ h: expect.any(String), k: expect.any(String), s: expect.any(String), u: expect.any(String) });
    expect(Object.keys(login)).not.toContain('avatarurl');
    expect(Object.keys(login)).not.toContain('sim_unknown');
  });

  it('tolerates unknown keys in a hand-written answer too', async () => {
    context.sim.injectFault('login', {
      contentType: 'application/json',
      rawBody: JSON.stringify({
        code: 200,
        msg: 'success',
        trace: { id: [1, null] },
        data: { token: 'tok-1', future: { deep: true }, rriot: { h: 'h', extra: 1, r: { a: 'a', more: [] } } },
      }),
    });

    const login = await accountClient(context).loginWithCode(loginParams(context.sim.regionUrl));

    expect(login).toMatchObject({ token: 'tok-1', rriot: { h: 'h', r: { a: 'a' } } });
    expect(Object.keys(login)).not.toContain('future');
  });

  it('refuses a plain-http regional address that is not loopback, sending no login', async () => {
    const error = await cloudFailure(accountClient(context).loginWithCode(loginParams(NON_LOOPBACK_HTTP)), 'insecure');

    expect(error.message).toContain('https://');
    expect(error.retryable).toBe(false);
    expect(error.serviceAnswered).toBe(false);
    expect(context.sim.requestsTo('login')).toHaveLength(0);
  });
});

describe('AccountClient with a region answer pointing at plain http', () => {
  const context = useSimulator({ regionUrlOverride: NON_LOOPBACK_HTTP });

  it('resolves the address, then refuses to send the code there', async () => {
    const client = accountClient(context);
    const region = await client.resolveRegion(ACCOUNT.email);
    expect(region.url).toBe(NON_LOOPBACK_HTTP);

    const error = await cloudFailure(client.loginWithCode(loginParams(region.url)), 'insecure');

    expect(error.message).toContain('http://192.0.2.10:8080');
    expect(context.logger.lines).toHaveLength(1);
    expect(context.sim.requestsTo('login')).toHaveLength(0);
  });
});

describe('AccountClient and service codes', () => {
  const context = useSimulator();

  it.each([
    [2018, 'the verification code is wrong or expired'],
    [2008, 'there is no such account at this server'],
    [3039, 'there is no such account at this server'],
    [9002, 'too many attempts'],
    [2010, 'the session is no longer valid'],
    [3006, 'the agreement version is out of date'],
    [1002, 'the service rejected a parameter'],
  ])('says what code %i means, without retrying', async (serviceCode, meaning) => {
    context.sim.injectFault('login', { serviceCode, msg: 'service says no' });

    const error = await cloudFailure(accountClient(context).loginWithCode(loginParams(context.sim.regionUrl)), 'service');

    expect(error).toMatchObject({ serviceCode, serviceMsg: 'service says no', retryable: false, serviceAnswered: true });
    expect(error.sessionInvalid).toBe(serviceCode === 2010);
    expect(error.serviceCodeMeaning).toBe(meaning);
    expect(error.message).toContain(`service code ${serviceCode} "service says no": ${meaning}`);
    // What to do about it depends on where the user signs in: that is the session layer's to say.
    expect(error.message).not.toContain('account.');
    expect(error.message).toContain('POST /api/v4/auth/email/login/code');
    expect(context.sim.requestsTo('login')).toHaveLength(1);
  });

  it('answers a wrong code with 2018 from the service itself', async () => {
    const error = await cloudFailure(
      accountClient(context).loginWithCode({ ...loginParams(context.sim.regionUrl), code: '000000' }),
      'service',
    );

    expect(error.serviceCode).toBe(2018);
    expect(context.sim.invalidRequests()).toEqual([]);
  });

  it('reads an envelope with an integer code but no data as the service saying no', async () => {
    context.sim.injectFault('region', { contentType: 'application/json', rawBody: '{"code":200,"msg":"success","data":null}' });

    const error = await cloudFailure(accountClient(context).resolveRegion(ACCOUNT.email), 'service');

    expect(error.serviceCode).toBe(200);
  });
});

describe('AccountClient and malformed answers', () => {
  const context = useSimulator();

  it.each([
    ['an HTML page', '<html><body>Bad gateway</body></html>', 'text/html', 'body is not JSON, content type text/html'],
    ['an empty body', '', 'application/json', 'empty body'],
    ['a JSON array', '[1,2]', 'application/json', 'the body must be object'],
    ['missing data and code', '{"msg":"success","other":1}', 'application/json', 'no data.url'],
    ['a string code', '{"code":"200","msg":"success","data":{"url":"http://127.0.0.1:1"}}', 'application/json', 'code must be integer'],
    ['a number as url', '{"code":200,"msg":"success","data":{"url":42}}', 'application/json', 'data.url must be string'],
    ['an empty url', '{"msg":"success","data":{"url":""}}', 'application/json', 'no data.url'],
    ['data as a string', '{"code":200,"msg":"success","data":"http://127.0.0.1:1"}', 'application/json', 'data must be object'],
  ])('refuses %s at region resolution, without retrying', async (_name, rawBody, contentType, detail) => {
    context.sim.injectFault('region', { rawBody, contentType });

    const error = await cloudFailure(accountClient(context).resolveRegion(ACCOUNT.email), 'malformed');

    expect(error.message).toContain(detail);
    expect(error.retryable).toBe(false);
    expect(context.sim.requestsTo('region')).toHaveLength(1);
  });

  it.each([
    ['uid as a string', { token: 'secret-token-1', uid: '12' }, 'data.uid must be integer'],
    ['rriot.h as a number', { token: 'secret-token-1', rriot: { h: 1 } }, 'data.rriot.h must be string'],
    ['rriot.r.a as null', { token: 'secret-token-1', rriot: { r: { a: null } } }, 'data.rriot.r.a must be string'],
    ['token as a number', { token: 123456789 }, 'data.token must be string'],
    ['no token', { nickname: 'someone' }, 'no data.token'],
  ])('refuses a login answer with %s, naming the field but not the value, as no decision on the code', async (_name, data, detail) => {
    context.sim.injectFault('login', { contentType: 'application/json', rawBody: JSON.stringify({ msg: 'success', data }) });

    const error = await cloudFailure(accountClient(context).loginWithCode(loginParams(context.sim.regionUrl)), 'malformed');

    expect(error.message).toContain(detail);
    expect(error.message).not.toContain('secret-token-1');
    // Not the service's answer (a proxy's, say): the code may be tried again.
    expect(error.serviceAnswered).toBe(false);
  });
});
