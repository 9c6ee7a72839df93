/**
 * Relay mode, the default a user gets, on real Homebridge 2 (the relay client is the plugin's own
 * code, the same under either Homebridge; the motion suite covers Homebridge 1): the plugin keeps one stream to the
 * loopback relay (ntfy protocol) and registers its topic; the simulated doorbell cloud delivers to the
 * relay, and the motion reaches a paired HomeKit controller. A break of the stream loses nothing, and
 * the topic never reaches the log.
 */
import { expect, it } from '@jest/globals';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changeOf } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { pluginLogLine } from './support/plugin-config.js';
import { itEndsCleanly, NO_FAULT, usePluginSetup, type DoorbellSensor } from './support/plugin-setup.js';

const SUBSCRIBED_TIMEOUT_MS = 10_000;

/** From the cloud's delivery, through the relay, to the controller's event. */
const MOTION_EVENT_TIMEOUT_MS = 5_000;

/** The plugin reconnects within 2 s (the first backoff step, of which the jitter waits 1 to 2 s), and the request. */
const RECONNECT_TIMEOUT_MS = 6_000;

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES.slice(0, 1))('$label, relay mode', (runtime) => {
  const setup = usePluginSetup(runtime, undefined, { delivery: 'relay' });
  let sensors: DoorbellSensor[];

  it(
    'opens the relay stream, registers <relay>/<topic>?up=1 and subscribes every doorbell',
    async () => {
      const homebridge = await setup().start();
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);
      const relay = setup().relay!;

      await homebridge.waitForLine(pluginLogLine(`push relay connected: ${relay.url.replace(/\./g, '\\.')}`), 0);
      const pushToken = setup().simulator.pushToken!;
      expect(pushToken).toMatch(new RegExp(`^${relay.url}/up[A-Za-z0-9_-]{12}\\?up=1$`));
      expect(relay.subscriberCount(new URL(pushToken).pathname.slice(1))).toBe(1);
      expect(homebridge.lines.some((line) => /Push receiver listening/.test(line))).toBe(false);
    },
    START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  it('turns a motion the cloud delivers to the relay into a MotionDetected event at the controller', async () => {
    sensors = await setup().sensors();
    const controller = await setup().controller();
    await controller.subscribe(...sensors.map(({ motionDetected }) => motionDetected));
    const [front] = sensors;

    expect(await setup().simulator.deliverMotion(front.serialNumber, { id: 'relay-1' })).toMatchObject({ status: 200 });
    await controller.nextEvent(changeOf(front.motionDetected, true), MOTION_EVENT_TIMEOUT_MS);
  });

  it(
    'loses nothing across a break of the stream: a motion delivered meanwhile arrives after the reconnect',
    async () => {
      const controller = await setup().controller();
      const garage = sensors[2];
      const relay = setup().relay!;
      const requestsBefore = relay.requests.length;

      relay.dropStreams();
      expect(await setup().simulator.deliverMotion(garage.serialNumber, { id: 'during-the-break' })).toMatchObject({ status: 200 });
      await controller.nextEvent(changeOf(garage.motionDetected, true), RECONNECT_TIMEOUT_MS + MOTION_EVENT_TIMEOUT_MS);

      const reconnect = relay.requests.slice(requestsBefore).find((request) => request.method === 'GET');
      expect(reconnect?.rawQuery).toMatch(/^since=[A-Za-z0-9]{12}$/);
      expect(await setup().statusFaults(sensors)).toEqual(sensors.map(() => NO_FAULT));
    },
    RECONNECT_TIMEOUT_MS + MOTION_EVENT_TIMEOUT_MS * 2,
  );

  itEndsCleanly(setup);
});
