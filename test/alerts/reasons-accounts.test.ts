/**
 * With several accounts, why alerts stopped names the account whose connection is at fault: its
 * session, its registration, its sign-in. What one account says never stands for another's doorbells.
 */
import { describe, expect, it } from '@jest/globals';
import { DownReasons, type ReasonSettings } from '../../src/alerts/reasons.js';
import { CloudError } from '../../src/cloud/errors.js';
import type { SessionLoss } from '../../src/connection/progress.js';

const DOORBELLS = [
  { deviceId: '1', name: 'Front Door' },
  { deviceId: '2', name: 'Back Door' },
  { deviceId: '3', name: 'Cabin Door' },
];
const PUSH: ReasonSettings['push'] = { mode: 'relay', direct: { host: '0.0.0.0', port: 47850 } };
const ACCOUNTS = [
  { label: 'Home', deviceIds: ['1', '2'] },
  { label: 'Cabin', deviceIds: ['3'] },
];
const NOW = new Date(2026, 2, 1, 10, 30).getTime();
const several = () => new DownReasons({ doorbells: DOORBELLS, push: PUSH, accounts: ACCOUNTS });
const httpError = (status: number) => new CloudError({ kind: 'http', method: 'PATCH', path: '/clients_api/device', status });

describe('why alerts stopped, with several accounts', () => {
  it.each<[SessionLoss, string]>([
    ['expired', 'the session of Cabin expired'],
    ['signed-out', 'Cabin is signed out'],
    ['token-refused', 'the doorbell access token of Cabin was refused'],
  ])('names the account whose session is %s, for its own doorbells only', (loss, words) => {
    const down = several();
    down.sessionUnavailable(loss, 'Cabin');

    expect(down.describe(['3'], NOW, NOW).words).toBe(words);
    // Home's doorbell, not yet confirmed, is down for a reason of its own.
    expect(down.describe(['1'], NOW, NOW).words).toBe('the subscription of Front Door is not confirmed yet');
    expect(down.describe(['1', '3'], NOW, NOW).words).toBe(words);
  });

  it("names the account whose registration or sign-in failed, and forgets it once one of its doorbells is subscribed", () => {
    const down = several();
    down.connectFailed('registration', httpError(503), 'Home');
    down.connectFailed('session', httpError(500), 'Cabin');

    expect(down.describe(['2'], NOW, NOW).words).toBe('the push registration of Home failed (the doorbell service answered HTTP 503)');
    expect(down.describe(['3'], NOW, NOW).words).toBe('signing in to Cabin failed (the account service answered HTTP 500)');

    down.subscribed('1');
    expect(down.describe(['2'], NOW, NOW).words).toBe('the subscription of Back Door is not confirmed yet');
    expect(down.describe(['3'], NOW, NOW).words).toMatch(/^signing in to Cabin failed/);
  });

  it('keeps the words of one account at the top unchanged', () => {
    const down = new DownReasons({ doorbells: DOORBELLS, push: PUSH });
    down.connectFailed('registration', httpError(503));
    expect(down.describe(['1'], NOW, NOW).words).toBe('the push registration failed (the doorbell service answered HTTP 503)');
    down.sessionUnavailable('expired');
    expect(down.describe(['1'], NOW, NOW).words).toBe('the session expired');
  });
});
