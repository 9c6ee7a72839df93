/**
 * The detection sensors over Matter, against the stand-in for Homebridge's `api.matter`
 * (test/support/fake-matter.ts): one occupancy sensor per configured detection, the package and animal
 * ones included, each with a UUID from the doorbell's id and the detection, a name of at most 32 bytes
 * that keeps its suffix, occupied only by a motion of its own detection.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { DoorbellSettings } from '../../src/config/parse-config.js';
import { MatterDoorbells } from '../../src/matter/matter-doorbells.js';
import type { MatterTiming } from '../../src/matter/registration-wait.js';
import { FakeMatter } from '../support/fake-matter.js';
import { createTestApi, createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { doorbellSettings } from '../../scripts/lib/platform-harness.js';
import { pollUntil } from '../../scripts/lib/poll.js';

const TIMING: MatterTiming = { firstCheckMs: 10, longestCheckMs: 200, slowAfterMs: 30_000 };
const DEVICE_ID = '1234567';
/** A Matter node label holds 32 bytes: this name leaves no room for any suffix unless it is cut. */
const LONG_NAME = 'Front Door of the Old Farmhouse on the Hill';
const SUFFIXES = { person: ' Person', vehicle: ' Vehicle', package: ' Package', animal: ' Animal', other: ' Other Motion' };
const DETECTIONS = Object.keys(SUFFIXES) as Array<keyof typeof SUFFIXES>;

let running: { matter: FakeMatter; devices: MatterDoorbells } | undefined;

afterEach(() => {
  running?.devices.dispose();
  running?.matter.dispose();
  running = undefined;
});

/** Publishes one doorbell with every detection and waits until Homebridge has registered its seven devices. */
async function published(settings: DoorbellSettings) {
  const { api } = createTestApi({ storagePath: '/nonexistent' });
  const matter = new FakeMatter({});
  matter.install(api);
  const devices = new MatterDoorbells(api, api.matter!, createTestLogger(), TIMING);
  running = { matter, devices };
  devices.publish([settings], { complete: true });
  await pollUntil(() => matter.registered.size, (size) => size === 2 + DETECTIONS.length, 5_000, 'every device registered', 10);
  const deviceOf = (detection: string) => matter.registered.get(api.hap.uuid.generate(`doorbell-motion:matter:${DEVICE_ID}:${detection}`));
  return { matter, devices, deviceOf };
}

describe('the detection sensors over Matter', () => {
  it('registers an occupancy sensor per detection, package and animal too, by the UUID of the doorbell and the detection', async () => {
    const { deviceOf } = await published(doorbellSettings({ deviceId: DEVICE_ID, name: 'Front Door', detections: [...DETECTIONS] }));

    expect(DETECTIONS.map((detection) => deviceOf(detection)?.definition.displayName)).toEqual([
      'Front Door Person',
      'Front Door Vehicle',
      'Front Door Package',
      'Front Door Animal',
      'Front Door Other Motion',
    ]);
    for (const detection of DETECTIONS) {
      const definition = deviceOf(detection)?.definition;
      expect([detection, definition?.deviceType.deviceType, definition?.serialNumber, definition?.clusters?.occupancySensing?.occupancy]).toEqual([
        detection,
        0x0107,
        DEVICE_ID,
        { occupied: false },
      ]);
    }
  });

  it('cuts a long doorbell name so each name is at most 32 bytes and keeps its suffix whole', async () => {
    const { deviceOf } = await published(doorbellSettings({ deviceId: DEVICE_ID, name: LONG_NAME, detections: [...DETECTIONS] }));

    for (const detection of DETECTIONS) {
      const name = deviceOf(detection)?.definition.displayName ?? '';
      expect([name, new TextEncoder().encode(name).length <= 32, name.endsWith(SUFFIXES[detection]), name.startsWith('Front Door')]).toEqual([name, true, true, true]);
    }
    expect(deviceOf('package')?.definition.displayName).toBe('Front Door of the Old Fa Package');
  });

  it.each<['package' | 'animal', string]>([
    ['package', 'Front Door Package'],
    ['animal', 'Front Door Animal'],
  ])('occupies the %s sensor, %s, at a motion of that detection, and no other device', async (detection, name) => {
    const { matter, devices } = await published(doorbellSettings({ deviceId: DEVICE_ID, name: 'Front Door', detections: [...DETECTIONS] }));
    const occupied = () =>
      [...matter.registered.values()]
        .filter(({ clusters }) => (clusters.occupancySensing?.occupancy as { occupied?: boolean } | undefined)?.occupied === true)
        .map(({ definition }) => definition.displayName);

    devices.doorbell(DEVICE_ID)?.follow({ type: 'motion', sensor: detection, detected: true, since: performance.now() });
    await pollUntil(occupied, (names) => names.length > 0, 1_000, `the ${detection} sensor occupied`, 10);

    expect(occupied()).toEqual([name]);
  });
});
