import { describe, expect, it } from '@jest/globals';
import type { OutgoingHttpHeaders } from 'node:http';
import { startSimulator } from '../../simulator/index.js';
import { useSimulator } from '../support/each-test.js';
import { json, send, ACCOUNT, regionUrl, freshMercyKs, login, loginForm, loginHeaders } from './requests.js';
import type { SendOptions } from './requests.js';

describe('simulator: region route (account server)', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT] });

  it('answers the regional address, the account country and unknown keys at every level', async () => {
    const response = await send(regionUrl(simulator()));

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    const body = json(response);
    expect(body).toMatchObject({ code: 200, msg: 'success', data: { country: 'DE', countrycode: '49', url: simulator().regionUrl } });
    expect(body.sim_unknown).toEqual(expect.objectContaining({ nested: expect.any(Object) }));
    expect((body.data as Record<string, unknown>).sim_unknown).toEqual(expect.objectContaining({ nested: expect.any(Object) }));
    expect(simulator().invalidRequests()).toEqual([]);
    expect(simulator().requestsTo('region')).toEqual([
      expect.objectContaining({ service: 'account', method: 'POST', path: '/api/v1/getUrlByEmail', rawQuery: 'email=a%2Bb%40example.com&needtwostepauth=false', body: '', status: 200, problems: [] }),
    ]);
  });

  it('hands out regionUrlOverride as data.url when set', async () => {
    const overridden = await startSimulator({ accounts: [ACCOUNT], regionUrlOverride: 'http://192.0.2.10:8080' });
    try {
      const body = json(await send(regionUrl(overridden)));
      expect((body.data as { url: string }).url).toBe('http://192.0.2.10:8080');
    } finally {
      await overridden.close();
    }
  });

  it('answers envelope 2008 for an unknown e-mail without calling it a problem', async () => {
    const response = await send(regionUrl(simulator(), 'email=nobody%40example.com&needtwostepauth=false'));

    expect(response.status).toBe(200);
    expect(json(response)).toEqual({ code: 2008, msg: 'account not exist', data: null });
    expect(simulator().invalidRequests()).toEqual([]);
  });

  const email = 'email=a%2Bb%40example.com';
  const violations: Array<[string, string, SendOptions, string]> = [
    ['a raw + in the e-mail', 'email=a+b%40example.com&needtwostepauth=false', {}, 'raw "+"'],
    ['needtwostepauth other than false', `${email}&needtwostepauth=true`, {}, 'needtwostepauth must be exactly "false"'],
    ['a missing needtwostepauth', email, {}, 'query is missing needtwostepauth'],
    ['an extra query key', `${email}&needtwostepauth=false&lang=en`, {}, 'unexpected key "lang"'],
    ['a repeated key', `${email}&${email}&needtwostepauth=false`, {}, 'email sent more than once'],
    ['broken percent-encoding', 'email=a%2&needtwostepauth=false', {}, 'broken percent-encoding'],
    ['something that is no e-mail address', 'email=nobody&needtwostepauth=false', {}, 'email must be an e-mail address'],
    ['a body', `${email}&needtwostepauth=false`, { body: '{}', headers: { 'content-type': 'application/json' } }, 'takes no body'],
    ['an Authorization header', `${email}&needtwostepauth=false`, { headers: { authorization: 'Bearer x' } }, 'authorization must not be sent'],
  ];

  it.each(violations)('refuses %s with 400, envelope 1002 and a recorded problem', async (_name, query, options, problem) => {
    const response = await send(regionUrl(simulator(), query), options);

    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({ code: 1002, data: null });
    const [recorded] = simulator().invalidRequests();
    expect(recorded.status).toBe(400);
    expect(recorded.problems.join('\n')).toContain(problem);
  });

  it('serves the region call only at the account base address', async () => {
    const response = await send(`${simulator().regionUrl}/api/v1/getUrlByEmail?email=a%2Bb%40example.com&needtwostepauth=false`);

    expect(response.status).toBe(404);
    expect(simulator().invalidRequests()).toEqual([expect.objectContaining({ service: 'region', route: 'region', status: 404 })]);
  });
});

type Data = Record<string, unknown> & { rriot: Record<string, unknown> & { r: Record<string, unknown> } };

describe('simulator: login route (regional server)', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT] });

  it('answers the full login data with a fresh token and unknown keys at every level', async () => {
    const response = await login(simulator());

    expect(response.status).toBe(200);
    const body = json(response);
    expect(body).toMatchObject({ code: 200, msg: 'success' });
    const data = body.data as Data;
    expect(Object.keys(data)).toEqual(
      expect.arrayContaining(['avatarurl', 'country', 'countrycode', 'nickname', 'region', 'rriot', 'rruid', 'token', 'tokentype', 'tuyaDeviceState', 'uid']),
    );
    expect(data).toMatchObject({ country: 'DE', countrycode: '49', token: simulator().issuedTokens[0] });
    expect(data.rriot).toMatchObject({ h: expect.any(String), k: expect.any(String), s: expect.any(String), u: expect.any(String) });
    expect(data.rriot.r).toMatchObject({ a: expect.any(String), l: expect.any(String), m: expect.any(String), r: expect.any(String) });
    for (const level of [body, data, data.rriot, data.rriot.r]) {
      expect(level.sim_unknown).toEqual(expect.objectContaining({ nested: expect.any(Object) }));
    }
    expect(simulator().issuedTokens).toHaveLength(1);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('tolerates the charset=utf-8 parameter that axios adds to the content type', async () => {
    const headers = loginHeaders({ 'content-type': 'application/x-www-form-urlencoded;charset=utf-8' });

    expect((await login(simulator(), { headers })).status).toBe(200);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('answers 2018 for a wrong code, which is no problem and does not spend the right one', async () => {
    const wrong = await login(simulator(), { body: loginForm({ code: '999999' }) });

    expect(wrong.status).toBe(200);
    expect(json(wrong)).toEqual({ code: 2018, msg: 'verification code is invalid', data: null });
    expect((await login(simulator())).status).toBe(200);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('accepts a code once: a second login with it answers 2018', async () => {
    expect(json(await login(simulator()))).toMatchObject({ code: 200 });

    expect(json(await login(simulator()))).toEqual({ code: 2018, msg: 'verification code is invalid', data: null });
    expect(simulator().issuedTokens).toHaveLength(1);
  });

  it('answers 2008 for an unknown e-mail', async () => {
    const response = await login(simulator(), { body: loginForm({ email: 'nobody@example.com' }) });

    expect(json(response)).toEqual({ code: 2008, msg: 'account not exist', data: null });
  });

  it('refuses a reused x-mercy-ks', async () => {
    const headers = loginHeaders();
    await login(simulator(), { headers, body: loginForm({ code: '999999' }) });

    const reused = await login(simulator(), { headers });

    expect(reused.status).toBe(400);
    expect(simulator().invalidRequests()[0].problems).toEqual(['header x-mercy-ks was used before: it must be new on every request']);
  });

  const ks = freshMercyKs();
  const headerViolations: Array<[string, OutgoingHttpHeaders, string]> = [
    ['a missing header_clientid', { header_clientid: undefined }, 'missing header header_clientid'],
    ['an empty header_clientid', { header_clientid: '' }, 'header_clientid must not be empty'],
    ['another header_clientlang', { header_clientlang: 'de' }, 'header_clientlang must be exactly "en"'],
    ['another header_appversion', { header_appversion: '4.54.01' }, 'header_appversion must be exactly "4.54.02"'],
    ['another header_phonesystem', { header_phonesystem: 'iOS' }, 'header_phonesystem must be exactly "Android"'],
    ['a missing header_phonemodel', { header_phonemodel: undefined }, 'missing header header_phonemodel'],
    ['a repeated header', { header_clientlang: ['en', 'en'] }, 'header header_clientlang sent 2 times'],
    ['a short x-mercy-ks', { 'x-mercy-ks': 'abc123' }, 'x-mercy-ks must be 16 letters and digits'],
    ['an x-mercy-ks with symbols', { 'x-mercy-ks': 'abcdefgh-1234567' }, 'x-mercy-ks must be 16 letters and digits'],
    ['x-mercy-k equal to x-mercy-ks', { 'x-mercy-ks': ks, 'x-mercy-k': ks }, 'x-mercy-k must be the lowercase hex SHA-256'],
    ['an Authorization header', { authorization: 'Bearer x' }, 'header authorization must not be sent'],
    ['a JSON content type', { 'content-type': 'application/json' }, 'Content-Type must be application/x-www-form-urlencoded'],
  ];

  it.each(headerViolations)('refuses %s with 400, envelope 1002 and a recorded problem', async (_name, overrides, problem) => {
    const response = await login(simulator(), { headers: loginHeaders(overrides) });

    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({ code: 1002, data: null });
    expect(simulator().invalidRequests()[0].problems.join('\n')).toContain(problem);
  });

  const valid = loginForm();
  const bodyViolations: Array<[string, string, string]> = [
    ['a missing field', valid.replace('&minorVersion=0', ''), 'body is missing minorVersion'],
    ['an extra field', `${valid}&lang=en`, 'unexpected key "lang"'],
    ['a repeated field', `${valid}&code=012345`, 'code sent more than once'],
    ['a 5-digit code', loginForm({ code: '12345' }), 'code must be 6 digits'],
    ['a code with letters', loginForm({ code: '12345a' }), 'code must be 6 digits'],
    ['a lower-case country', loginForm({ country: 'de' }), 'country must be 2 uppercase letters'],
    ['a countryCode with a plus', loginForm({ countryCode: '+49' }), 'countryCode must be 1 to 4 digits'],
    ['a negative majorVersion', loginForm({ majorVersion: '-1' }), 'majorVersion must be a non-negative decimal integer'],
    ['a fractional minorVersion', loginForm({ minorVersion: '0.5' }), 'minorVersion must be a non-negative decimal integer'],
    ['a raw + in the e-mail', valid.replace('a%2Bb', 'a+b'), 'raw "+"'],
    ['something that is no e-mail address', loginForm({ email: 'nobody' }), 'email must be an e-mail address'],
  ];

  it.each(bodyViolations)('refuses %s with 400 and a recorded problem', async (_name, body, problem) => {
    const response = await login(simulator(), { body });

    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({ code: 1002 });
    expect(simulator().invalidRequests()[0].problems.join('\n')).toContain(problem);
  });

  it('never spends the code on a refused request', async () => {
    await login(simulator(), { body: loginForm({ country: 'de' }) });

    expect(json(await login(simulator()))).toMatchObject({ code: 200 });
  });

  it('serves login only at the regional address', async () => {
    const response = await send(`${simulator().accountUrl}/api/v4/auth/email/login/code`, { headers: loginHeaders(), body: loginForm() });

    expect(response.status).toBe(404);
    expect(simulator().requestsTo('login')).toEqual([expect.objectContaining({ service: 'account', status: 404, problems: [expect.stringContaining('regional server')] })]);
    expect(simulator().issuedTokens).toEqual([]);
  });
});
