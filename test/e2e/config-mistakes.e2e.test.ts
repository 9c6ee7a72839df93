/**
 * What a user may type into the platform block, on a real Homebridge 2, two runs of one storage: an
 * address no request can go to (the settings form used to take `https://home.example.com:99999`,
 * and Homebridge stopped on it) leaves Homebridge running, with one line naming the setting; a note
 * or a setting of a newer version beside a valid block, under the fully-qualified platform name,
 * gives doorbells that work.
 */
import { expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changeOf } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { doorbellMotionPlatform, pluginLogLine } from './support/plugin-config.js';
import { expectRunningOnce, expectStoppedInTime, itLeavesNoTrace, NO_FAULT, usePluginSetup, WATCH_MS } from './support/plugin-setup.js';

const [HOMEBRIDGE_2] = HOMEBRIDGE_RUNTIMES;

/** Sign-in, registration and three subscriptions take well under a second against the simulator. */
const SUBSCRIBED_TIMEOUT_MS = 10_000;

/** From the simulator's delivery to the controller's MotionDetected event, with room for a busy machine. */
const MOTION_EVENT_TIMEOUT_MS = 5_000;

const BAD_PUBLIC_URL = 'https://home.example.com:99999';

describeWithBuiltPlugin('Homebridge 2, a platform block as users write it', () => {
  const setup = usePluginSetup(HOMEBRIDGE_2);

  it(
    `push.publicUrl ${BAD_PUBLIC_URL} in direct mode: Homebridge keeps running, one line names push.publicUrl, nothing is sent`,
    async () => {
      const { endpoints, sandbox, simulator } = setup();
      const push = { mode: 'direct', host: '127.0.0.1', port: endpoints.pushPort, publicUrl: BAD_PUBLIC_URL };
      await sandbox.writeConfig([doorbellMotionPlatform(endpoints, { push })]);

      const stopped = await setup().runOnce(async (homebridge) => {
        await homebridge.waitForLine(pluginLogLine('Doing nothing until the configuration is fixed'), START_TIMEOUT_MS);
        await sleep(WATCH_MS);

        expectRunningOnce(homebridge);
        expect(homebridge.lines.filter((line) => line.includes('push.publicUrl'))).toEqual([
          expect.stringMatching(pluginLogLine('Configuration: push\\.publicUrl must be an http:// or https:// address')),
        ]);
        expect(homebridge.lines.filter((line) => /TypeError|Invalid URL|uncaught|unhandled/i.test(line))).toEqual([]);
        // The bridge answers a controller, with no doorbell on it: published from a config nobody can use, they would lie.
        expect(await (await setup().controller()).accessories()).toHaveLength(1);
        expect(simulator.requests).toEqual([]);
      });
      expectStoppedInTime(stopped);
    },
    START_TIMEOUT_MS + WATCH_MS + STOP_TIMEOUT_MS,
  );

  it(
    'unknown keys at every level, under homebridge-doorbell-motion.DoorbellMotion: one warning each, and every doorbell works',
    async () => {
      const { endpoints, sandbox, simulator } = setup();
      const valid = doorbellMotionPlatform(endpoints) as { account: object; push: object; doorbells: object[] };
      await sandbox.writeConfig([
        {
          ...valid,
          platform: 'homebridge-doorbell-motion.DoorbellMotion',
          note: 'set up by Sam',
          account: { ...valid.account, comment: 'the family account' },
          push: { ...valid.push, futureOption: true },
          doorbells: [{ ...valid.doorbells[0], chime: 'westminster' }, ...valid.doorbells.slice(1)],
        },
      ]);

      const stopped = await setup().runOnce(async (homebridge) => {
        await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);

        const named = homebridge.lines.filter((line) => line.includes('is not a known setting; it is ignored')).map((line) => /Configuration: (\S+)/.exec(line)?.[1]);
        expect(named.sort()).toEqual(['account.comment', 'doorbells[0].chime', 'note', 'push.futureOption']);
        const controller = await setup().controller();
        const sensors = await setup().sensors();
        await controller.subscribe(...sensors.map(({ motionDetected }) => motionDetected));
        for (const sensor of sensors) {
          expect(await simulator.deliverMotion(sensor.serialNumber)).toMatchObject({ status: 202 });
          await controller.nextEvent(changeOf(sensor.motionDetected, true), MOTION_EVENT_TIMEOUT_MS);
        }
        expectRunningOnce(homebridge);
      });
      expectStoppedInTime(stopped);
    },
    START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS + 3 * MOTION_EVENT_TIMEOUT_MS + STOP_TIMEOUT_MS,
  );

  itLeavesNoTrace(setup);
});
