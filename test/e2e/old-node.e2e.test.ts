/**
 * On a Node.js older than the plugin needs (the machine's own Node 20), on a real Homebridge 2, which
 * only warns about it: the plugin says once, as an error, which Node.js it needs, and stays idle. No
 * request, no receiver and no relay stream, so no push is ever answered 500 and no stream broken;
 * the doorbells published from the cache show a fault and no motion. The tests themselves run on a
 * Node.js the plugin supports; they start Homebridge under the older one.
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { olderNodeBinary } from '../../scripts/lib/node-binary.js';
import { nodeVersionProblem } from '../../src/values/node-version.js';
import { portIsFree } from '../../scripts/lib/platform-harness.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { doorbellMotionPlatform, PLATFORM_LOG_NAME, pluginLogLine } from './support/plugin-config.js';
import { expectRunningOnce, expectStoppedInTime, GENERAL_FAULT, itLeavesNoTrace, NO_FAULT, usePluginSetup, WATCH_MS } from './support/plugin-setup.js';

const [HOMEBRIDGE_2] = HOMEBRIDGE_RUNTIMES;

const OLD_NODE = olderNodeBinary();

/** Sign-in, registration and three subscriptions take well under a second against the simulator. */
const SUBSCRIBED_TIMEOUT_MS = 10_000;

/** The version the older binary reports: the one the plugin names when it runs there. */
const OLD_NODE_VERSION = OLD_NODE === undefined ? '' : execFileSync(OLD_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 10_000 }).trim();

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The one line the plugin logs on such a Node.js, with the version it runs on. */
const NODE_TOO_OLD_LINE = pluginLogLine(escapeRegExp(`This plugin ${nodeVersionProblem(OLD_NODE_VERSION) ?? ''}. Update Node.js`));

const describeOnOldNode = OLD_NODE === undefined ? describe.skip : describeWithBuiltPlugin;
if (OLD_NODE === undefined) {
  // Said where the test output shows it, so that a skipped check is not mistaken for a passed one.
  process.stderr.write('old-node.e2e: skipped, no Node.js older than 22.12 on this machine (PATH, /usr/bin, /usr/local/bin)\n');
}

describeOnOldNode(`Homebridge 2 on ${OLD_NODE ?? 'an older Node.js'}`, () => {
  describe('in direct mode, with doorbells cached by a run on a supported Node.js', () => {
    const setup = usePluginSetup(HOMEBRIDGE_2, async ({ sandbox, endpoints }) => {
      // Motion stays on across the restart unless the plugin clears it.
      await sandbox.writeConfig([doorbellMotionPlatform(endpoints, { motionTimeout: 600 })]);
    });

    it(
      'first runs on the Node.js of the tests: every doorbell subscribed, motion at each',
      async () => {
        const stopped = await setup().runOnce(async () => {
          await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);
          const controller = await setup().controller();
          for (const sensor of await setup().sensors()) {
            expect(await setup().simulator.deliverMotion(sensor.serialNumber)).toMatchObject({ status: 202 });
            expect(await controller.read(sensor.motionDetected)).toEqual([true]);
          }
        });
        expectStoppedInTime(stopped);
      },
      START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS + STOP_TIMEOUT_MS,
    );

    it(
      'then says once which Node.js it needs, opens no receiver, sends nothing, and shows every cached doorbell faulted without motion',
      async () => {
        const { simulator, endpoints } = setup();
        const requestsBefore = simulator.requests.length;
        const stopped = await setup().runOnce(async (homebridge) => {
          await homebridge.waitForLine(NODE_TOO_OLD_LINE, START_TIMEOUT_MS);
          await sleep(WATCH_MS);

          // Homebridge's own line as it constructs the platform, then the plugin's one line, and nothing more.
          expect(homebridge.lines.filter((line) => line.startsWith(`[${PLATFORM_LOG_NAME}]`))).toEqual([
            `[${PLATFORM_LOG_NAME}] Initializing DoorbellMotion platform...`,
            expect.stringMatching(NODE_TOO_OLD_LINE),
          ]);
          expect(simulator.requests.slice(requestsBefore)).toEqual([]);
          expect(await portIsFree(endpoints.pushPort)).toBe(true);
          // A delivery finds nothing to answer it: never a 500.
          expect((await simulator.deliverMotion((await setup().sensors())[0].serialNumber)).status).toBe(0);

          const sensors = await setup().sensors();
          expect(await setup().statusFaults(sensors)).toEqual(sensors.map(() => GENERAL_FAULT));
          expect(await (await setup().controller()).read(...sensors.map(({ motionDetected }) => motionDetected))).toEqual(sensors.map(() => false));
          expectRunningOnce(homebridge);
        }, OLD_NODE);
        expectStoppedInTime(stopped);
      },
      START_TIMEOUT_MS + WATCH_MS + STOP_TIMEOUT_MS,
    );

    itLeavesNoTrace(setup);
  });

  describe('in relay mode', () => {
    const setup = usePluginSetup(HOMEBRIDGE_2, () => undefined, { delivery: 'relay' });

    it(
      'opens no relay stream and sends nothing',
      async () => {
        const stopped = await setup().runOnce(async (homebridge) => {
          await homebridge.waitForLine(NODE_TOO_OLD_LINE, START_TIMEOUT_MS);
          await sleep(WATCH_MS);

          expect(setup().relay?.requests).toEqual([]);
          expect(setup().simulator.requests).toEqual([]);
          expectRunningOnce(homebridge);
        }, OLD_NODE);
        expectStoppedInTime(stopped);
      },
      START_TIMEOUT_MS + WATCH_MS + STOP_TIMEOUT_MS,
    );
  });
});
