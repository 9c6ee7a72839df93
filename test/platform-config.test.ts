/**
 * The platform block as users write it, through the whole platform on real HAP objects: a value that
 * cannot be used is named and stops only this plugin, never Homebridge; a note or a setting of another
 * version is named and ignored; a doorbell written twice is published once, and works.
 */
import { describe, expect, it } from '@jest/globals';
import type { PlatformConfig } from 'homebridge';
import { alertsSensorUuid } from '../src/alerts/alerts-sensor.js';
import { accessoryUuid } from '../src/accessories/doorbell-accessory.js';
import { delay, DOORBELLS, platformConfig, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed } from './support/platform-testbed.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);

const testbed = usePlatformTestbed();

function linesAt(platform: RunningPlatform, level: 'warn' | 'error'): string[] {
  return platform.log.lines.filter((line) => line.level === level).map((line) => line.message);
}

/** The warnings about the configuration, leaving out those about where the cloud delivers in direct mode. */
function configurationWarnings(platform: RunningPlatform): string[] {
  return linesAt(platform, 'warn').filter((line) => line.startsWith('Configuration: '));
}

/** Motion and a ring at `deviceId` reach HomeKit: the doorbell works end to end. */
async function expectWorkingDoorbell(platform: RunningPlatform, deviceId: string, name: string): Promise<void> {
  expect((await testbed.sim.deliverMotion(deviceId)).status).toBe(202);
  expect(sensorValue(platform.test, deviceId, 'MotionDetected')).toBe(true);
  expect((await testbed.sim.deliverMotion(deviceId, { kind: 'ding', id: `ring-${deviceId}` })).status).toBe(202);
  expect(logged(platform, `Doorbell rang at ${name}`)).toBe(true);
}

describe('a value that cannot be used', () => {
  it.each([
    ['push.publicUrl', { push: { mode: 'direct', host: '127.0.0.1', publicUrl: 'https://home.example.com:99999' } }],
    ['push.publicUrl', { push: { mode: 'direct', host: '127.0.0.1', publicUrl: 'http://[1::2::3]' } }],
    ['push.relayUrl', { push: { mode: 'relay', relayUrl: 'https://relay.example.com:123456' } }],
    ['doorbellServerUrl', { doorbellServerUrl: 'https://doorbell.example.com:0' }],
  ])('%s in %j is named in one line, and the plugin does nothing else, without a throw', async (key, overrides) => {
    const platform = testbed.launch({ overrides });
    await delay(100);

    expect(linesAt(platform, 'error')).toEqual([expect.stringMatching(new RegExp(`^Configuration: ${key.replace('.', '\\.')} must be `)), 'Doing nothing until the configuration is fixed.']);
    expect(platform.test.registered.size).toBe(0);
    expect(testbed.sim.requests).toEqual([]);
  });

  it('account.serverUrl with port 70000 is named, and no sign-in is tried', async () => {
    const config = platformConfig(testbed.sim, testbed.pushPort);
    const platform = testbed.launch({ block: { ...config, account: { ...(config.account as object), serverUrl: 'https://account.example.com:70000' } } });
    await delay(100);

    expect(linesAt(platform, 'error')[0]).toMatch(/^Configuration: account\.serverUrl must be /);
    expect(testbed.sim.requests).toEqual([]);
  });
});

describe('more doorbells than a bridge holds', () => {
  it('are named, and nothing is published: HAP-NodeJS would throw for the 150th, stopping Homebridge', async () => {
    const doorbells = Array.from({ length: 150 }, (_, index) => ({ deviceId: String(index + 1) }));
    const platform = testbed.launch({ block: { ...platformConfig(testbed.sim, testbed.pushPort), doorbells } });
    await delay(100);

    expect(linesAt(platform, 'error')[0]).toBe('Configuration: doorbells must be a list of 1 to 149 doorbells, at least one of them valid');
    expect(platform.test.bridge.bridgedAccessories).toHaveLength(0);
    expect(testbed.sim.requests).toEqual([]);
  });
});

describe('keys the plugin does not know', () => {
  /** The simulator's block with a note or an unknown setting at every level, one doorbell entry included. */
  function withUnknownKeys(config: PlatformConfig): PlatformConfig {
    const { account, push, doorbells } = config as unknown as { account: object; push: object; doorbells: object[] };
    return {
      ...config,
      note: 'set up by Sam',
      account: { ...account, comment: 'the family account' },
      push: { ...push, futureOption: true },
      doorbells: [{ ...doorbells[0], chime: 'westminster' }, ...doorbells.slice(1)],
    };
  }

  it('are named in one warning each and ignored: every doorbell works, the one with the unknown key included', async () => {
    const platform = testbed.launch({ block: withUnknownKeys(platformConfig(testbed.sim, testbed.pushPort)) });
    await waitFor(() => allConfirmed(platform), 'every doorbell subscribed');

    expect(configurationWarnings(platform).sort()).toEqual([
      'Configuration: account.comment is not a known setting; it is ignored',
      'Configuration: doorbells[0].chime is not a known setting; it is ignored',
      'Configuration: note is not a known setting; it is ignored',
      'Configuration: push.futureOption is not a known setting; it is ignored',
    ]);
    expect(linesAt(platform, 'error')).toEqual([]);
    await expectWorkingDoorbell(platform, FRONT, 'Front Door');
    await expectWorkingDoorbell(platform, BACK, 'Back Door');
  });

  it('include neither the fully-qualified platform name nor the child bridge: the plugin runs as under its short name', async () => {
    const block = { ...platformConfig(testbed.sim, testbed.pushPort), platform: 'homebridge-doorbell-motion.DoorbellMotion', _bridge: { name: 'Doorbells', username: '0E:00:00:00:00:01', pin: '031-45-154', port: 51830 } };
    const platform = testbed.launch({ block });
    await waitFor(() => allConfirmed(platform), 'every doorbell subscribed');

    expect(configurationWarnings(platform)).toEqual([]);
    await expectWorkingDoorbell(platform, FRONT, 'Front Door');
  });
});

describe('a deviceId written twice', () => {
  it('as "1234567" and 1234567 leaves the later entry out, named: one accessory on that UUID, and its doorbell works', async () => {
    const doorbells = [...DOORBELLS, { deviceId: Number(FRONT), name: 'Front Door Again' }];
    const platform = testbed.launch({ block: { ...platformConfig(testbed.sim, testbed.pushPort), doorbells } });
    await waitFor(() => allConfirmed(platform), 'every doorbell subscribed');

    expect(linesAt(platform, 'error')).toEqual(['Configuration: doorbells[2].deviceId repeats doorbells[0].deviceId: each doorbell needs its own deviceId']);
    expect([...platform.test.registered.values()].map((accessory) => [accessory.UUID, accessory.displayName])).toEqual([
      [accessoryUuid(platform.test.api, FRONT), 'Front Door'],
      [accessoryUuid(platform.test.api, BACK), 'Back Door'],
      [alertsSensorUuid(platform.test.api), 'Doorbell Alerts'],
    ]);
    expect(testbed.sim.requestsTo('subscribe').filter((request) => request.path.includes(`/${FRONT}/`))).toHaveLength(1);
    await expectWorkingDoorbell(platform, FRONT, 'Front Door');
  });
});
