/**
 * A Motion Alerts or Chime switch off for a while, through the whole platform on real HAP objects: with
 * its minutes set, a switch turned off turns itself on again that many minutes later, to the
 * millisecond, whatever the wall clock does meanwhile; a restart keeps the rest of the time, and a
 * switch whose time ran out while Homebridge was down is on at launch. The log and status.json say
 * until when. Each test runs on a fake clock (timers, Date, performance); sockets and files stay real.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Characteristic as HapCharacteristic } from 'homebridge';
import type { DeliveryStatus, DoorbellStatus } from '../src/status/delivery-status.js';
import { hap } from '../scripts/lib/hap.js';
import { accessoryOf, DOORBELLS, type RunningPlatform } from '../scripts/lib/platform-harness.js';
import { usePlatformTestbed } from './support/platform-testbed.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);
const { Characteristic, Service } = hap;
type Control = 'motion-alerts' | 'chime';

/** The front door's switches turn themselves on again (the chime after 30 minutes, motion alerts after 90); the back door's stay off. */
const WITH_MINUTES = [
  { ...DOORBELLS[0], motionSwitch: true, chimeSwitch: true, chimeSwitchMinutes: 30, motionSwitchMinutes: 90 },
  { ...DOORBELLS[1], motionSwitch: true, chimeSwitch: true },
];

const MINUTE = 60_000;
/** 14:00 on the host's clock, when each test turns a switch off. */
const TWO_PM = new Date(2026, 10, 28, 14, 0, 0).getTime();
const clockAt = (hours: number, minutes: number) => new Date(2026, 10, 28, hours, minutes, 0).getTime();

function onOf(platform: RunningPlatform, deviceId: string, control: Control): HapCharacteristic {
  const service = accessoryOf(platform, deviceId).services.find((candidate) => candidate.UUID === Service.Switch.UUID && candidate.subtype === control);
  if (service === undefined) {
    throw new Error(`doorbell ${deviceId} has no ${control} switch`);
  }
  return service.getCharacteristic(Characteristic.On);
}

/** What a controller reads: through onGet, from memory. */
const isOn = (platform: RunningPlatform, deviceId: string, control: Control) => onOf(platform, deviceId, control).handleGetRequest();

/** A controller's write of the switch's On (by hand, Siri or an automation). */
async function turn(platform: RunningPlatform, deviceId: string, control: Control, on: boolean): Promise<void> {
  await onOf(platform, deviceId, control).handleSetRequest(on);
}

/** Every value the switch shows from now on, with the fake clock's wall time and monotonic time. */
function recordTurns(platform: RunningPlatform, deviceId: string, control: Control): Array<{ on: unknown; wall: number; monotonic: number }> {
  const turns: Array<{ on: unknown; wall: number; monotonic: number }> = [];
  onOf(platform, deviceId, control).on('change', ({ newValue }) => turns.push({ on: newValue, wall: Date.now(), monotonic: performance.now() }));
  return turns;
}

const infoLines = (platform: RunningPlatform) => platform.log.lines.filter(({ level }) => level === 'info').map(({ message }) => message);

/** Moves the fake clock on, letting what it fires run. */
async function advance(ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
}

describe('a switch off for a while', () => {
  const testbed = usePlatformTestbed();

  /**
   * Launched on a fake clock at 14:00 on the host's clock. The switches need no subscription: the
   * connection goes on in the background, as far as the fake clock takes it.
   */
  function launchedAtTwo(): RunningPlatform {
    jest.useFakeTimers({ now: TWO_PM, doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'hrtime'] });
    return testbed.launch({ doorbells: WITH_MINUTES });
  }

  /**
   * The front door in status.json once it holds what `holds` accepts: the fake clock moves on 100 ms at
   * a time (status.json is written within a second of a change) while the real write runs. Bounded.
   */
  async function frontStatus(what: string, holds: (doorbell: DoorbellStatus) => boolean): Promise<DoorbellStatus> {
    let front: DoorbellStatus | undefined;
    for (let step = 0; step < 300; step += 1) {
      const status: DeliveryStatus | undefined = await testbed.readStatus();
      front = status?.doorbells.find(({ deviceId }) => deviceId === FRONT);
      if (front !== undefined && holds(front)) {
        return front;
      }
      await advance(100);
      await sleep(20);
    }
    throw new Error(`status.json never showed ${what}; last seen: ${JSON.stringify(front)}`);
  }

  /** Runs `test` and goes back to real timers, whatever happens. */
  async function onFakeClock(test: () => Promise<void>): Promise<void> {
    try {
      await test();
    } finally {
      jest.useRealTimers();
    }
  }

  it('turns the Chime on again exactly its minutes after it was turned off, and says until when in the log and status.json', async () => {
    const platform = launchedAtTwo();
    await onFakeClock(async () => {
      const turns = recordTurns(platform, FRONT, 'chime');
      const offAt = performance.now();
      await turn(platform, FRONT, 'chime', false);

      expect(infoLines(platform)).toContain('The chime at Front Door turned off until 14:30');
      const off = await frontStatus('the chime off until 14:30', (front) => front.chimeOffUntil !== null);
      expect(off).toMatchObject({ chimeOffUntil: new Date(clockAt(14, 30)).toISOString(), motionAlertsOffUntil: null });

      // A millisecond before its time it is still off; at its time it is on, for every controller.
      await advance(offAt + 30 * MINUTE - 1 - performance.now());
      expect(await isOn(platform, FRONT, 'chime')).toBe(false);
      await advance(1);
      expect(await isOn(platform, FRONT, 'chime')).toBe(true);
      expect(onOf(platform, FRONT, 'chime').value).toBe(true);
      expect(turns).toEqual([
        { on: false, wall: TWO_PM, monotonic: offAt },
        { on: true, wall: clockAt(14, 30), monotonic: offAt + 30 * MINUTE },
      ]);
      expect(infoLines(platform)).toContain('Front Door Chime is on again');
      await frontStatus('the chime on again', (front) => front.chimeOffUntil === null);
    });
  });

  it('turns Motion Alerts on again by its own minutes, and leaves a switch without minutes off', async () => {
    const platform = launchedAtTwo();
    await onFakeClock(async () => {
      await turn(platform, FRONT, 'motion-alerts', false);
      await turn(platform, BACK, 'chime', false);
      expect(infoLines(platform)).toEqual(expect.arrayContaining(['Motion alerts at Front Door turned off until 15:30', 'The chime at Back Door turned off']));
      expect(await frontStatus('motion alerts off until 15:30', (front) => front.motionAlertsOffUntil !== null)).toMatchObject({
        motionAlertsOffUntil: new Date(clockAt(15, 30)).toISOString(),
        chimeOffUntil: null,
      });

      await advance(clockAt(15, 30) - 1 - Date.now());
      expect(await isOn(platform, FRONT, 'motion-alerts')).toBe(false);
      await advance(1);
      expect(await isOn(platform, FRONT, 'motion-alerts')).toBe(true);
      expect(infoLines(platform)).toContain('Front Door Motion Alerts is on again');

      // A whole day later, the switch without minutes is still as it was left.
      await advance(24 * 60 * MINUTE);
      expect(await isOn(platform, BACK, 'chime')).toBe(false);
      expect(infoLines(platform).filter((line) => line.startsWith('Back Door'))).toEqual([]);
    });
  });

  it('ends the wait when turned on, starts a new one when turned off again, and a new one when told off while off', async () => {
    const platform = launchedAtTwo();
    await onFakeClock(async () => {
      const turns = recordTurns(platform, FRONT, 'chime');
      await turn(platform, FRONT, 'chime', false);
      await advance(10 * MINUTE);
      await turn(platform, FRONT, 'chime', true);
      expect(infoLines(platform)).toContain('The chime at Front Door turned on');
      // Past the first wait's end: nothing turns it on, since it is on.
      await advance(40 * MINUTE);
      expect(turns.map(({ on, wall }) => [on, wall])).toEqual([
        [false, TWO_PM],
        [true, clockAt(14, 10)],
      ]);

      // Off again at 14:50, and said off again at 15:00 ("a longer nap"): on at 15:30, not 15:20.
      await turn(platform, FRONT, 'chime', false);
      await advance(10 * MINUTE);
      await turn(platform, FRONT, 'chime', false);
      expect(infoLines(platform)).toEqual(
        expect.arrayContaining(['The chime at Front Door turned off until 15:20', 'The chime at Front Door turned off until 15:30']),
      );
      await advance(clockAt(15, 30) - 1 - Date.now());
      expect(await isOn(platform, FRONT, 'chime')).toBe(false);
      await advance(1);
      expect(await isOn(platform, FRONT, 'chime')).toBe(true);
      expect(turns.filter(({ on }) => on === true).map(({ wall }) => wall)).toEqual([clockAt(14, 10), clockAt(15, 30)]);
      expect(infoLines(platform).filter((line) => line === 'Front Door Chime is on again')).toHaveLength(1);
    });
  });

  it.each([
    ['forward', 60 * MINUTE],
    ['back', -60 * MINUTE],
  ])('keeps its minutes when the wall clock is set %s an hour meanwhile', async (_direction, stepMs) => {
    const platform = launchedAtTwo();
    await onFakeClock(async () => {
      const turns = recordTurns(platform, FRONT, 'chime');
      const offAt = performance.now();
      await turn(platform, FRONT, 'chime', false);
      await advance(10 * MINUTE);
      // The host's clock steps; time itself, as timers and performance.now() count it, does not.
      jest.setSystemTime(Date.now() + stepMs);

      await advance(offAt + 30 * MINUTE - 1 - performance.now());
      expect(await isOn(platform, FRONT, 'chime')).toBe(false);
      await advance(1);
      expect(await isOn(platform, FRONT, 'chime')).toBe(true);
      expect(turns.map(({ on, monotonic }) => [on, monotonic])).toEqual([
        [false, offAt],
        [true, offAt + 30 * MINUTE],
      ]);
    });
  });

  it('keeps the rest of its time across a restart', async () => {
    const first = launchedAtTwo();
    await onFakeClock(async () => {
      await turn(first, FRONT, 'chime', false);
      await advance(10 * MINUTE);
      await testbed.stop(first);
      // Down for five minutes.
      jest.setSystemTime(clockAt(14, 15));

      const second = testbed.launch({ doorbells: WITH_MINUTES, cached: first.test.registered });
      expect(await isOn(second, FRONT, 'chime')).toBe(false);
      const turns = recordTurns(second, FRONT, 'chime');
      expect(await frontStatus('the kept end', (front) => front.chimeOffUntil !== null)).toMatchObject({
        chimeOffUntil: new Date(clockAt(14, 30)).toISOString(),
      });

      await advance(clockAt(14, 30) - 1 - Date.now());
      expect(await isOn(second, FRONT, 'chime')).toBe(false);
      await advance(1);
      expect(await isOn(second, FRONT, 'chime')).toBe(true);
      expect(turns).toEqual([{ on: true, wall: clockAt(14, 30), monotonic: expect.any(Number) }]);
      expect(infoLines(second)).toContain('Front Door Chime is on again');
    });
  });

  it('never stays off longer than its minutes after a launch with the clock far behind (a machine without a clock battery)', async () => {
    const first = launchedAtTwo();
    await onFakeClock(async () => {
      await turn(first, FRONT, 'chime', false);
      await testbed.stop(first);
      jest.setSystemTime(TWO_PM - 24 * 60 * MINUTE);

      const second = testbed.launch({ doorbells: WITH_MINUTES, cached: first.test.registered });
      const launchedAt = performance.now();
      expect(await isOn(second, FRONT, 'chime')).toBe(false);
      await advance(launchedAt + 30 * MINUTE - 1 - performance.now());
      expect(await isOn(second, FRONT, 'chime')).toBe(false);
      await advance(1);
      expect(await isOn(second, FRONT, 'chime')).toBe(true);
    });
  });

  it('is on at launch when its time ran out while Homebridge was down', async () => {
    const first = launchedAtTwo();
    await onFakeClock(async () => {
      await turn(first, FRONT, 'chime', false);
      await turn(first, FRONT, 'motion-alerts', false);
      await testbed.stop(first);
      // Down from 14:00 to 14:31: the chime's 30 minutes ran out, motion alerts' 90 did not.
      jest.setSystemTime(clockAt(14, 31));

      const second = testbed.launch({ doorbells: WITH_MINUTES, cached: first.test.registered });
      expect(await isOn(second, FRONT, 'chime')).toBe(true);
      expect(onOf(second, FRONT, 'chime').value).toBe(true);
      expect(await isOn(second, FRONT, 'motion-alerts')).toBe(false);
      expect(infoLines(second)).toContain('Front Door Chime is on again');
      expect(await frontStatus('the chime on', (front) => front.chimeOffUntil === null)).toMatchObject({
        chimeOffUntil: null,
        motionAlertsOffUntil: new Date(clockAt(15, 30)).toISOString(),
      });
    });
  });
});
