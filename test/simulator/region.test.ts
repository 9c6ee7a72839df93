import { describe, expect, it } from '@jest/globals';
import { startSimulator } from '../../simulator/index.js';
import { useSimulator } from '../support/simulator.js';
import { json, send } from './http.js';
import type { SendOptions } from './http.js';
import { ACCOUNT, regionUrl } from './requests.js';

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
