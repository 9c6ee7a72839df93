/**
 * The mechanism behind "no address can stop Homebridge": every address the configuration check
 * accepts is one that every later step can use without throwing. Each address is tried in each
 * address setting at once (a launched platform reaches them only when the rest of a generated block
 * is valid too, which test/config/launched-platform.property.test.ts covers), and every step that
 * reads an accepted address runs on it: the push settings, the start-up warnings, the https rule, the
 * push tokens and the URL the clients build from them.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseConfig, type PlatformSettings } from '../../src/config/parse-config.js';
import { pushAddressWarnings } from '../../src/config/push-settings.js';
import { directPushToken, relayPushToken } from '../../src/push/notification.js';
import { originOf } from '../../src/values/address.js';
import { insecureUrlProblem } from '../../src/values/address.js';
import { propertyRuns } from '../support/property-runs.js';
import { goodUrl, ODD_URLS } from '../support/typed-values.js';

const LAN = { networkInterfaces: () => ({}), platform: 'linux' };

/** Addresses of every kind: generated web URLs, ones the check must take, and odd ones. */
const ADDRESSES = fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), goodUrl(47850, true), ODD_URLS, fc.string());

/** A block with `address` in every address setting; direct mode, so the public address is read. */
function blockWith(address: string): Record<string, unknown> {
  return {
    name: 'Doorbell Motion',
    account: { serverUrl: address, email: 'you@example.com', country: 'US', countryCode: '1' },
    doorbellServerUrl: address,
    doorbells: [{ deviceId: '1234567' }],
    push: { mode: 'direct', relayUrl: address, publicUrl: address, host: '127.0.0.1' },
  };
}

/** What the plugin and the settings page do with the addresses of accepted settings. */
function useAddresses(settings: PlatformSettings): void {
  const { push, account, doorbellServerUrl } = settings;
  pushAddressWarnings(push);
  pushAddressWarnings({ ...push, mode: 'relay' });
  for (const url of [account?.serverUrl ?? doorbellServerUrl, doorbellServerUrl, push.relay.relayUrl, push.direct.publicUrl]) {
    insecureUrlProblem(url);
    originOf(url);
    new URL(`${url}/clients_api/device`);
  }
  new URL(relayPushToken(push.relay.relayUrl, 'up0123456789ab'));
  new URL(directPushToken(push.direct.publicUrl, 'x'.repeat(43)));
}

describe('an accepted address', () => {
  it('never makes a later step throw', () => {
    let accepted = 0;
    fc.assert(
      fc.property(ADDRESSES, (address) => {
        const result = parseConfig(blockWith(address), LAN);
        if (result.status === 'ok') {
          accepted += 1;
          useAddresses(result.settings);
        }
      }),
      propertyRuns(5_000),
    );
    // Not vacuous: many generated addresses pass the check and are put to use.
    expect(accepted).toBeGreaterThan(0);
  });
});
