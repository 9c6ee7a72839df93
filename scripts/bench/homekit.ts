/**
 * Latency as HomeKit sees it: a controller paired with the benchmarked Homebridge, subscribed to each
 * doorbell's ring and motion events, times the HAP event it receives for each notification, and turns
 * the Chime switches as the Home app does. hap-nodejs sends these events without its usual 250 ms
 * coalescing, as HAP requires for button and motion events.
 */
import { MIN_RING_INTERVAL_MS } from '../../src/accessories/doorbell-accessory.js';
import { changeOf, findBySerialNumber, HapCharacteristic, HapService, HapTestClient, type CharacteristicRef, type HapAccessory } from '../lib/hap-client.js';
import type { BenchHomebridge } from './homebridge.js';
import { ARRIVAL_TIMEOUT_MS, pathLatency, type NotificationSender, type PathLatency, type Signal } from './latency.js';

/** HAP's ProgrammableSwitchEvent value for a single press, the only press a ring is. */
const SINGLE_PRESS = 0;

/**
 * A real Homebridge reads the real clock, by which a doorbell presses at most once in 5 s: a doorbell's
 * rings go 5 s apart and a little more (the plugin measures from when it accepts a ring, a millisecond
 * or two after it was sent).
 */
const RING_GAP_MS = MIN_RING_INTERVAL_MS + 250;

type Watched = Record<Signal | 'chime', CharacteristicRef>;

export async function homekitLatency(
  homebridge: BenchHomebridge,
  sender: NotificationSender,
  doorbells: readonly string[],
  /** Rings per doorbell per ring figure: each round takes 5 s. */
  ringRounds: number,
): Promise<PathLatency> {
  const controller = await HapTestClient.pair(homebridge.bridge, homebridge.bridge.pin);
  // The rings with the Chime off are watched on a connection of their own: subscribed on the first,
  // the programmable switch would add an event to every ring with the Chime on, and time to its figure.
  // It subscribes once the Chime is off, so that no event of a ring before is waiting there.
  const silentRings = controller.anotherConnection();
  let silentRingsSubscribed = false;
  try {
    const watched = watchedCharacteristics(await controller.accessories(), doorbells);
    const of = (deviceId: string): Watched => watched.get(deviceId) as Watched;
    await controller.subscribe(...doorbells.flatMap((deviceId) => (['ring', 'motion', 'personMotion'] as const).map((signal) => of(deviceId)[signal])));
    return await pathLatency(sender, doorbells, {
      watch: (deviceId, signal) => {
        const expected = signal === 'ring' || signal === 'silentRing' ? SINGLE_PRESS : true;
        const client = signal === 'silentRing' ? silentRings : controller;
        return client.nextEvent(changeOf(of(deviceId)[signal], expected), ARRIVAL_TIMEOUT_MS).then(() => performance.now());
      },
      setChime: async (deviceIds, on) => {
        for (const deviceId of deviceIds) {
          await controller.write(of(deviceId).chime, on);
        }
        if (!on && !silentRingsSubscribed) {
          silentRingsSubscribed = true;
          await silentRings.subscribe(...doorbells.map((deviceId) => of(deviceId).silentRing));
        }
      },
    }, { samples: doorbells.length * ringRounds, gapMs: RING_GAP_MS });
  } finally {
    await silentRings.close();
    await controller.close();
  }
}

/** A controller tells a doorbell's services of one type apart by their names. */
function watchedCharacteristics(accessories: readonly HapAccessory[], doorbells: readonly string[]): Map<string, Watched> {
  return new Map(
    doorbells.map((deviceId) => {
      const accessory = findBySerialNumber(accessories, deviceId);
      const named = (type: string, characteristic: string, suffix = '') => accessory.characteristic(type, characteristic, `${String(accessory.name)}${suffix}`);
      const watched: Watched = {
        ring: named(HapService.Doorbell, HapCharacteristic.ProgrammableSwitchEvent),
        silentRing: named(HapService.StatelessProgrammableSwitch, HapCharacteristic.ProgrammableSwitchEvent),
        motion: named(HapService.MotionSensor, HapCharacteristic.MotionDetected),
        personMotion: named(HapService.MotionSensor, HapCharacteristic.MotionDetected, ' Person'),
        chime: named(HapService.Switch, HapCharacteristic.On, ' Chime'),
      };
      return [deviceId, watched];
    }),
  );
}
