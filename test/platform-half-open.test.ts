/**
 * The Doorbell Alerts sensor against relay breaks on the production timing (the 100 s alive rule, the
 * minute before the doorbells' fault, the minute before the sensor opens, the 120 s stale rule), on a
 * fake clock with real sockets: the platform, the simulator and the loopback relay, the home's link
 * to the relay through a loopback proxy that can go silent without closing (a half-open connection).
 * A ring is either shown or the sensor is open: a half-open drop opens the sensor 120 s after the
 * stream's last sign of life, when a ring sent from then on would come back too old to show, and such
 * a ring is counted as late in that outage. A relay restart that closes the stream never opens it.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { HomeLink } from '../scripts/soak/home-link.js';
import { startRelay, type Relay } from '../simulator/relay/index.js';
import { alertsSensorUuid } from '../src/alerts/alerts-sensor.js';
import { ALERTS_OPEN_AFTER_MS } from '../src/alerts/alerts-rule.js';
import type { PlatformTiming } from '../src/platform.js';
import { RELAY_TIMING } from '../src/push/relay/subscription.js';
import type { DeliveryStatus } from '../src/status/delivery-status.js';
import { hap } from '../scripts/lib/hap.js';
import { SHAPES } from './support/notification-payloads.js';
import { DOORBELLS, FAST, sensorValue } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from './support/platform-testbed.js';
import { runUntil } from './support/fake-clock.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);

/** The production relay timing and the sensor's minute; only the reconnect backoff is short, as it sleeps in real time. */
const TIMING: PlatformTiming = { ...FAST, relay: { ...RELAY_TIMING, reconnect: FAST.relay.reconnect }, alerts: { openAfterMs: ALERTS_OPEN_AFTER_MS } };
/** ntfy's keepalive interval: well within the alive timeout. */
const KEEPALIVE_MS = 45_000;
const { CONTACT_DETECTED: CLOSED, CONTACT_NOT_DETECTED: OPEN } = hap.Characteristic.ContactSensorState;

const testbed = usePlatformTestbed();

/** Moves the fake clock to `at` (ms since the epoch), a second at a time. */
async function runTo(at: number): Promise<void> {
  while (Date.now() < at) {
    await jest.advanceTimersByTimeAsync(Math.min(1_000, at - Date.now()));
    await sleep(1);
  }
}

/** Every state the sensor takes from now on, with the fake clock's time it took it. */
function recordStates(platform: RunningPlatform): Array<{ state: unknown; at: number }> {
  const states: Array<{ state: unknown; at: number }> = [];
  platform.test.registered
    .get(alertsSensorUuid(platform.test.api))
    ?.getService(hap.Service.ContactSensor)
    ?.getCharacteristic(hap.Characteristic.ContactSensorState)
    .on('change', ({ newValue }) => states.push({ state: newValue, at: Date.now() }));
  return states;
}

const warnings = (platform: RunningPlatform) => platform.log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message);
const topicOf = (pushToken: string | undefined) => new URL(pushToken ?? 'http://x/').pathname.slice(1);
const faulted = (platform: RunningPlatform) => DOORBELLS.every(({ deviceId }) => sensorValue(platform.test, deviceId, 'StatusFault') === 1);

/** Runs `test` on a fake clock (timers, Date, performance) with a relay of its own; sockets stay real. */
async function onFakeClock(test: (relay: Relay) => Promise<void>): Promise<void> {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'hrtime'] });
  let relay: Relay | undefined;
  try {
    relay = await startRelay({ keepaliveMs: KEEPALIVE_MS });
    await test(relay);
  } finally {
    jest.useRealTimers();
    await relay?.close();
  }
}

describe('on the production timing', () => {
  it('opens the sensor 120 s after a half-open stream last showed life, and counts the ring sent meanwhile as late in that outage', async () => {
    await onFakeClock(async (relay) => {
      const link = await HomeLink.open(relay.url, () => Date.now());
      try {
        const platform = testbed.launch({ relayUrl: link.url, timing: TIMING });
        await runUntil(() => allConfirmed(platform), 'subscriptions', 10);
        const states = recordStates(platform);

        // The stream's last sign of life: a motion, shown (the clock stands still meanwhile); then the link
        // goes silent both ways without closing.
        await testbed.sim.deliverMotion(FRONT);
        await runUntil(() => sensorValue(platform.test, FRONT, 'MotionDetected') === true, 'the motion', 0);
        const lastSign = Date.now();
        link.cutOff();
        await runTo(lastSign + 5_000);
        // The doorbell service still reaches the relay, which caches the ring for the stream's catch-up.
        relay.publish(topicOf(testbed.sim.pushToken), SHAPES.flat({ deviceId: BACK, kind: 'ding', id: '"ring-in-the-cut"' }), { unifiedPush: true });

        // The alive rule finds the stream silent 100 s after its last sign of life.
        await runTo(lastSign + RELAY_TIMING.aliveMs);
        await runUntil(() => faulted(platform), 'the relay fault');
        await runTo(lastSign + 150_000);
        link.restore();
        // The faults clear in the same turn as the sensor closes.
        await runUntil(() => !faulted(platform), 'the stream back');

        // To the millisecond steps the clock takes while real sockets carry the reconnect.
        const after = (at: number) => Math.floor((at - lastSign) / 1_000) * 1_000;
        expect(states.map(({ state, at }) => [state, after(at)])).toEqual([
          [OPEN, 120_000],
          [CLOSED, 150_000],
        ]);
        const status = await fakeClockStatus('the late ring counted', (written) => written.outages?.[0]?.late === 1);
        expect(status.dropped?.stale).toBe(1);
        expect(status.outages).toEqual([
          { from: new Date(lastSign + 60_000).toISOString(), to: new Date(states[1].at).toISOString(), reason: expect.stringMatching(/^the relay has been unreachable since /), late: 1 },
        ]);
        expect(status.alerts?.flowing).toBe(true);
        expect(sensorValue(platform.test, BACK, 'MotionDetected')).toBe(false);
        expect(warnings(platform).filter((message) => message.startsWith('Doorbell alerts'))).toEqual([
          expect.stringMatching(/^Doorbell alerts stopped: the relay has been unreachable since (\d{4}-\d\d-\d\d )?\d\d:\d\d\. /),
        ]);
      } finally {
        await link.close();
      }
    });
  });

  it('never opens the sensor for a relay restart of 30 s that closes the stream', async () => {
    await onFakeClock(async (relay) => {
      const platform = testbed.launch({ relayUrl: relay.url, timing: TIMING });
      await runUntil(() => allConfirmed(platform), 'subscriptions', 10);
      const states = recordStates(platform);
      const connects = () => platform.log.lines.filter(({ message }) => message.startsWith('push relay connected')).length;

      await relay.stop();
      const stoppedAt = Date.now();
      await runTo(stoppedAt + 30_000);
      await relay.start();
      await runUntil(() => connects() === 2, 'the stream back');
      await runTo(stoppedAt + 5 * 60_000);

      expect(states).toEqual([]);
      expect(allConfirmed(platform)).toBe(true);
      expect(warnings(platform).filter((message) => message.startsWith('Doorbell alerts') || message.startsWith('Push relay unreachable'))).toEqual([]);
    });
  });
});

/** status.json once it holds what `holds` accepts, moving the fake clock on so that it is written. */
async function fakeClockStatus(what: string, holds: (status: DeliveryStatus) => boolean): Promise<DeliveryStatus> {
  let status: DeliveryStatus | undefined;
  await runUntil(
    async () => {
      status = await testbed.readStatus();
      return status !== undefined && holds(status);
    },
    what,
    100,
  );
  return status as DeliveryStatus;
}
