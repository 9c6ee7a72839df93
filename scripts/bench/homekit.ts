/**
 * Latency as HomeKit sees it: a controller paired with the benchmarked Homebridge, subscribed to each
 * doorbell's ring and motion events, times the HAP event it receives for each notification, and turns
 * the Chime switches as the Home app does. hap-nodejs sends these events without its usual 250 ms
 * coalescing, as HAP requires for button and motion events.
 */
import { changeOf, findBySerialNumber, HapCharacteristic, HapService, HapTestClient, type CharacteristicRef } from '../../test/e2e/support/hap-client.js';
import type { BenchHomebridge } from './homebridge.js';
import { ARRIVAL_TIMEOUT_MS, pathLatency, type NotificationSender, type PathLatency, type Signal } from './latency.js';

/** HAP's ProgrammableSwitchEvent value for a single press, the only press a ring is. */
const SINGLE_PRESS = 0;

type Watched = Record<Signal | 'chime', CharacteristicRef>;

export async function homekitLatency(
  homebridge: BenchHomebridge,
  sender: NotificationSender,
  doorbells: readonly string[],
  samples: number,
): Promise<PathLatency> {
  const controller = await HapTestClient.pair(homebridge.bridge, homebridge.bridge.pin);
  try {
    const accessories = await controller.accessories();
    const watched = new Map<string, Watched>(
      doorbells.map((deviceId) => {
        const accessory = findBySerialNumber(accessories, deviceId);
        // A controller tells a doorbell's services of one type apart by their names.
        const named = (type: string, characteristic: string, suffix = '') => accessory.characteristic(type, characteristic, `${String(accessory.name)}${suffix}`);
        return [
          deviceId,
          {
            ring: named(HapService.Doorbell, HapCharacteristic.ProgrammableSwitchEvent),
            silentRing: named(HapService.StatelessProgrammableSwitch, HapCharacteristic.ProgrammableSwitchEvent),
            motion: named(HapService.MotionSensor, HapCharacteristic.MotionDetected),
            personMotion: named(HapService.MotionSensor, HapCharacteristic.MotionDetected, ' Person'),
            chime: named(HapService.Switch, HapCharacteristic.On, ' Chime'),
          },
        ];
      }),
    );
    const of = (deviceId: string): Watched => watched.get(deviceId) as Watched;
    await controller.subscribe(...doorbells.flatMap((deviceId) => (['ring', 'silentRing', 'motion', 'personMotion'] as const).map((signal) => of(deviceId)[signal])));
    return await pathLatency(sender, doorbells, samples, {
      watch: (deviceId, signal) => {
        const expected = signal === 'ring' || signal === 'silentRing' ? SINGLE_PRESS : true;
        return controller.nextEvent(changeOf(of(deviceId)[signal], expected), ARRIVAL_TIMEOUT_MS).then(() => performance.now());
      },
      setChime: async (deviceIds, on) => {
        for (const deviceId of deviceIds) {
          await controller.write(of(deviceId).chime, on);
        }
      },
    });
  } finally {
    await controller.close();
  }
}
