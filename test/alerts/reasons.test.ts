/**
 * Why alerts stopped, in the words of the warning and status.json: each reason the plugin can see, the
 * first down doorbell's when several are, and what to do, naming the settings page where signing in is
 * the fix. The words come from an error's kind and status alone, so an address or a path never reaches
 * status.json.
 */
import { describe, expect, it } from '@jest/globals';
import { DownReasons, CONFIGURATION_INVALID, NODE_TOO_OLD, NOT_CONFIGURED, type ReasonSettings } from '../../src/alerts/reasons.js';
import { CloudError } from '../../src/cloud/errors.js';
import type { SessionLoss } from '../../src/connection/progress.js';

const DOORBELLS = [
  { deviceId: '1', name: 'Front Door' },
  { deviceId: '2', name: 'Back Door' },
  { deviceId: '3', name: 'Garage' },
  { deviceId: '4', name: 'Side Gate' },
  { deviceId: '5', name: 'Shed' },
];
const RELAY: ReasonSettings['push'] = { mode: 'relay', direct: { host: '0.0.0.0', port: 47850 } };
const DIRECT: ReasonSettings['push'] = { ...RELAY, mode: 'direct' };
const NOW = new Date(2026, 2, 1, 10, 30).getTime();
const SINCE = new Date(2026, 2, 1, 10, 2).getTime();
const SETTINGS_PAGE = "the plugin's settings page in the Homebridge UI";

const httpError = (status: number) => new CloudError({ kind: 'http', method: 'POST', path: '/clients_api/doorbots/1/motions_subscribe', status });
const reasons = (push = RELAY) => new DownReasons({ doorbells: DOORBELLS, push });

describe('why alerts stopped', () => {
  it.each<[SessionLoss, string]>([
    ['expired', 'the session expired'],
    ['signed-out', 'signed out'],
  ])('a session %s: says so, and to sign in again on the settings page', (loss, words) => {
    const down = reasons();
    down.sessionUnavailable(loss);

    const reason = down.describe(['1', '2'], SINCE, NOW);
    expect(reason.words).toBe(words);
    expect(reason.todo).toMatch(new RegExp(`^Sign in again: .* on ${SETTINGS_PAGE}`));
  });

  it('the relay unreachable, since when on this machine\'s clock; or refusing access, naming the token', () => {
    const down = reasons();
    down.deliveryDown({ since: SINCE, refused: false });
    expect(down.describe(['1'], NOW, NOW).words).toBe('the relay has been unreachable since 10:02');
    down.deliveryDown({ since: SINCE - 24 * 3_600_000, refused: false });
    expect(down.describe(['1'], NOW, NOW).words).toBe('the relay has been unreachable since 2026-02-28 10:02');
    down.deliveryDown({ since: SINCE, refused: true });
    expect(down.describe(['1'], NOW, NOW)).toEqual({ words: 'the relay refused access', todo: `Check push.relayToken on ${SETTINGS_PAGE}; the plugin keeps trying.` });
  });

  it('a subscription failing: the first down doorbell\'s cause, with every doorbell whose subscription failed', () => {
    const down = reasons();
    down.subscriptionFailed('2', httpError(404));
    down.subscriptionFailed('3', httpError(503));
    expect(down.describe(['2', '3'], SINCE, NOW).words).toBe('the subscription of Back Door and Garage failed (the doorbell service does not know this device id)');
    DOORBELLS.forEach(({ deviceId }) => down.subscriptionFailed(deviceId, httpError(503)));
    expect(down.describe(['5', '4', '3', '2', '1'], SINCE, NOW).words).toBe('the subscription of Shed, Side Gate, Garage and 2 more failed (the doorbell service answered HTTP 503)');
    down.subscribed('2');
    expect(down.describe(['3'], SINCE, NOW).words).toBe('the subscription of Garage failed (the doorbell service answered HTTP 503)');
    down.subscribed('1');
    down.sessionUnavailable('signed-out');
    down.subscribed('5');
    expect(down.describe(['1', '3'], SINCE, NOW).words).toBe('the subscription of Front Door is not confirmed yet');
  });

  it('the push registration failing, or the receiver unable to listen, or signing in failing', () => {
    const down = reasons(DIRECT);
    down.connectFailed('registration', new CloudError({ kind: 'network', method: 'POST', path: '/clients_api/device', detail: 'ECONNREFUSED' }));
    expect(down.describe(['1'], SINCE, NOW).words).toBe('the push registration failed (the doorbell service cannot be reached)');
    down.connectFailed('push-endpoint', new Error('Push receiver cannot listen on 0.0.0.0:47850: the port is already in use'));
    expect(down.describe(['1'], SINCE, NOW)).toEqual({
      words: 'the push receiver cannot listen on 0.0.0.0:47850',
      todo: `Free port 47850, or choose another push.port, push.host or relay mode on ${SETTINGS_PAGE}.`,
    });
    down.connectFailed('session', new CloudError({ kind: 'timeout', method: 'POST', path: '/v4/auth/email/login' }));
    expect(down.describe(['1'], SINCE, NOW).words).toBe('signing in failed (the account service did not answer in time)');
  });

  it('the relay stream not opening at launch: unreachable since the doorbells went down', () => {
    const down = reasons();
    down.connectFailed('push-endpoint', new Error('The push relay https://ntfy.sh did not open a stream within 30 s.'));

    expect(down.describe(['1', '2'], SINCE, NOW).words).toBe('the relay has been unreachable since 10:02');
  });

  it('nothing known yet: the doorbells not confirmed', () => {
    expect(reasons().describe(['1', '2'], SINCE, NOW)).toEqual({ words: 'the subscription of Front Door and Back Door is not confirmed yet', todo: 'The plugin keeps trying.' });
  });

  it.each([
    [CONFIGURATION_INVALID, 'the configuration is invalid', /^Fix the settings the log names, on the plugin's settings page/],
    [NOT_CONFIGURED, 'the plugin is not configured yet', /^Sign in and add your doorbells on the plugin's settings page/],
    [NODE_TOO_OLD, 'this Node.js is too old', /^Update Node\.js to version 22\.12 or later/],
  ])('the whole plugin down: %s', (key, words, todo) => {
    const reason = reasons().describe([key], SINCE, NOW);

    expect(reason.words).toBe(words);
    expect(reason.todo).toMatch(todo);
  });

  it('a session lost outweighs what the doorbells were doing before', () => {
    const down = reasons();
    down.subscriptionFailed('1', httpError(503));
    down.deliveryDown({ since: SINCE, refused: false });
    down.sessionUnavailable('expired');

    expect(down.describe(['1'], SINCE, NOW).words).toBe('the session expired');
  });
});
