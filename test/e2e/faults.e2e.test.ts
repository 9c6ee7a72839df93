/**
 * What the plugin does when the services fail it (docs/cloud-protocol.md), on real Homebridge: a
 * refused code is sent once, a refused session stops all traffic, passing server errors are
 * retried until every doorbell is subscribed, and a doorbell the doorbell service reports offline is
 * in fault until an alert from it proves it back. Each scenario is one Homebridge run on a fresh storage.
 */
import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { START_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { DOORBELLS, pluginLogLine, SERIAL_NUMBERS } from './support/plugin-config.js';
import { expectRunningOnce, GENERAL_FAULT, itEndsCleanly, NO_FAULT, usePluginSetup, WATCH_MS, type DoorbellSensor } from './support/plugin-setup.js';

/** The plugin's retries back off 1 to 2 s, then 2 to 4 s: two of them on each route fit well within. */
const RECOVERY_TIMEOUT_MS = 20_000;

const EVERY_DOORBELL_FAULTED = DOORBELLS.map(() => GENERAL_FAULT);

/** Sign-in, registration, three subscriptions and the doorbell list read take well under a second against the simulator. */
const LIST_READ_TIMEOUT_MS = 10_000;

/** From the list's answer, or a motion's delivery, to the fault it changes at the controller: one event loop turn or so. */
const FAULT_CHANGE_TIMEOUT_MS = 5_000;

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

  describe('a doorbell the doorbell service reports offline at launch', () => {
    const front = SERIAL_NUMBERS[0] as string;
    const setup = usePluginSetup(runtime, ({ simulator }) => simulator.setDoorbellHealth(front, { connection: 'offline' }));
    let sensors: DoorbellSensor[];

    it(
      'shows that doorbell in fault once the launch\'s doorbell list read has answered, and the others not',
      async () => {
        await setup().start();
        const { simulator } = setup();
        // The read runs right after the first subscriptions; before it answers, nothing says the doorbell is offline.
        await pollUntil(
          () => simulator.requestsTo('devices').map(({ status }) => status),
          (statuses) => statuses.includes(200),
          LIST_READ_TIMEOUT_MS,
          'the doorbell list read answered',
          50,
        );
        sensors = await setup().sensors();
        await setup().waitForStatusFaults(GENERAL_FAULT, FAULT_CHANGE_TIMEOUT_MS, sensors.slice(0, 1));
        await setup().waitForStatusFaults(NO_FAULT, FAULT_CHANGE_TIMEOUT_MS, sensors.slice(1));

        expect(await setup().statusFaults(sensors)).toEqual([GENERAL_FAULT, NO_FAULT, NO_FAULT]);
        expect([...simulator.subscribedDoorbells].sort()).toEqual([...SERIAL_NUMBERS].sort());
        await setup().homebridge.waitForLine(pluginLogLine('Front Door is offline in the doorbell service'), FAULT_CHANGE_TIMEOUT_MS);
      },
      START_TIMEOUT_MS + LIST_READ_TIMEOUT_MS + 3 * FAULT_CHANGE_TIMEOUT_MS,
    );

    it(
      'clears its fault at the controller when a motion from it arrives, since an alert proves it reaches the service',
      async () => {
        const { simulator } = setup();
        expect(await simulator.deliverMotion(front, { id: 'motion-from-offline' })).toMatchObject({ status: 202 });
        await setup().waitForStatusFaults(NO_FAULT, FAULT_CHANGE_TIMEOUT_MS, sensors.slice(0, 1));

        expect(await setup().statusFaults(sensors)).toEqual([NO_FAULT, NO_FAULT, NO_FAULT]);
        await setup().homebridge.waitForLine(pluginLogLine('Front Door is online again in the doorbell service'), FAULT_CHANGE_TIMEOUT_MS);
        expectRunningOnce(setup().homebridge);
      },
      3 * FAULT_CHANGE_TIMEOUT_MS,
    );

    itEndsCleanly(setup);
  });
});
