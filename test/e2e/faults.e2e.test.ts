/**
 * What the plugin does when the services fail it (docs/cloud-protocol.md), on real Homebridge: a
 * refused code is sent once, a refused session stops all traffic, and passing server errors are
 * retried until every doorbell is subscribed. Each scenario is one Homebridge run on a fresh storage.
 */
import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { START_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { DOORBELLS, pluginLogLine, SERIAL_NUMBERS } from './support/plugin-config.js';
import { expectRunningOnce, GENERAL_FAULT, itEndsCleanly, NO_FAULT, usePluginSetup, WATCH_MS } from './support/plugin-setup.js';

/** The plugin's retries back off 1 to 2 s, then 2 to 4 s: two of them on each route fit well within. */
const RECOVERY_TIMEOUT_MS = 20_000;

const EVERY_DOORBELL_FAULTED = DOORBELLS.map(() => GENERAL_FAULT);

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES)('$label', (runtime) => {
  describe('service code 2018 (wrong or expired code) at login', () => {
    const setup = usePluginSetup(runtime, ({ simulator }) => simulator.injectFault('login', { serviceCode: 2018, msg: 'verification code is invalid' }));

    it(
      'logs what to do, sends the code exactly once, and shows every doorbell in fault while Homebridge stays up',
      async () => {
        const homebridge = await setup().start();
        await homebridge.waitForLine(pluginLogLine('service code 2018.*account\\.code'), START_TIMEOUT_MS);
        await sleep(WATCH_MS);

        const { simulator } = setup();
        expect(simulator.requestsTo('login')).toHaveLength(1);
        expect(simulator.requestsTo('register')).toHaveLength(0);
        expect(await setup().statusFaults()).toEqual(EVERY_DOORBELL_FAULTED);
        expectRunningOnce(homebridge);
      },
      START_TIMEOUT_MS + WATCH_MS,
    );

    itEndsCleanly(setup);
  });

  describe('HTTP 401 on a motion subscription', () => {
    const setup = usePluginSetup(runtime, ({ simulator }) => simulator.injectFault('subscribe', { status: 401 }));

    it(
      'says how to sign in again, faults every doorbell (the two subscribed ones too), and sends nothing more',
      async () => {
        const homebridge = await setup().start();
        await homebridge.waitForLine(pluginLogLine('no longer accepts this session'), START_TIMEOUT_MS);
        const { simulator } = setup();
        const requestsAfterRefusal = simulator.requests.length;
        await sleep(WATCH_MS);

        expect(simulator.requestsTo('subscribe')).toHaveLength(DOORBELLS.length);
        expect(simulator.requests).toHaveLength(requestsAfterRefusal);
        expect(await setup().statusFaults()).toEqual(EVERY_DOORBELL_FAULTED);
        expectRunningOnce(homebridge);
      },
      START_TIMEOUT_MS + WATCH_MS,
    );

    itEndsCleanly(setup);
  });

  describe('HTTP 503 twice on registration and twice on subscription, then success', () => {
    const setup = usePluginSetup(runtime, ({ simulator }) => {
      simulator.injectFault('register', { status: 503, times: 2 });
      simulator.injectFault('subscribe', { status: 503, times: 2 });
    });

    it(
      'retries until every doorbell is subscribed and out of fault',
      async () => {
        await setup().start();
        await setup().waitForStatusFaults(NO_FAULT, RECOVERY_TIMEOUT_MS);

        const { simulator } = setup();
        expect(simulator.requestsTo('register').map(({ status }) => status)).toEqual([503, 503, 204]);
        const subscriptionStatuses = simulator.requestsTo('subscribe').map(({ status }) => status);
        expect(subscriptionStatuses.sort()).toEqual([200, 200, 200, 503, 503]);
        expect([...simulator.subscribedDoorbells].sort()).toEqual([...SERIAL_NUMBERS].sort());
      },
      START_TIMEOUT_MS + RECOVERY_TIMEOUT_MS,
    );

    itEndsCleanly(setup);
  });
});
