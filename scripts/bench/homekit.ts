/**
 * Latency as HomeKit sees it: a controller paired with the benchmarked Homebridge, subscribed to each
 * doorbell's ring and motion, times the HAP event it receives for each notification. hap-nodejs sends
 * both without its usual 250 ms coalescing of events, as HAP requires for button and motion events.
 */
import { changeOf, findBySerialNumber, HapCharacteristic, HapService, HapTestClient, type CharacteristicRef } from '../../test/e2e/support/hap-client.js';
import type { BenchHomebridge } from './homebridge.js';
import { ARRIVAL_TIMEOUT_MS, ringAndMotionLatency, type NotificationKind, type NotificationSender, type PathLatency } from './latency.js';

/** HAP's ProgrammableSwitchEvent value for a single press, the only press a ring is. */
const SINGLE_PRESS = 0;

export async function homekitLatency(
  homebridge: BenchHomebridge,
  sender: NotificationSender,
  doorbells: readonly string[],
  samples: number,
): Promise<PathLatency> {
  const controller = await HapTestClient.pair(homebridge.bridge, homebridge.bridge.pin);
  try {
    const accessories = await controller.accessories();
    const watched = new Map<string, Record<NotificationKind, CharacteristicRef>>(
      doorbells.map((deviceId) => {
        const accessory = findBySerialNumber(accessories, deviceId);
        const ding = accessory.characteristic(HapService.Doorbell, HapCharacteristic.ProgrammableSwitchEvent);
        const motion = accessory.characteristic(HapService.MotionSensor, HapCharacteristic.MotionDetected);
        return [deviceId, { ding, motion }];
      }),
    );
    await controller.subscribe(...[...watched.values()].flatMap(({ ding, motion }) => [ding, motion]));
    return await ringAndMotionLatency(sender, doorbells, samples, (deviceId, kind) => {
      const characteristic = (watched.get(deviceId) as Record<NotificationKind, CharacteristicRef>)[kind];
      const expected = kind === 'ding' ? SINGLE_PRESS : true;
      return controller.nextEvent(changeOf(characteristic, expected), ARRIVAL_TIMEOUT_MS).then(() => performance.now());
    });
  } finally {
    await controller.close();
  }
}
