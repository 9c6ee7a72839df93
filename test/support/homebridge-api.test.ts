import { tmpdir } from 'node:os';
import { describe, expect, it } from '@jest/globals';
import type { Logger } from '../../src/log.js';
import { createTestApi, createTestLogger, reloadFromCache } from '../../scripts/lib/homebridge-api.js';

// The platform's tests trust this stand-in for Homebridge, so it is held to Homebridge's behaviour here.
describe('createTestApi', () => {
  function newAccessory(api: ReturnType<typeof createTestApi>['api'], name: string) {
    return new api.platformAccessory(name, api.hap.uuid.generate(name));
  }

  it('registers, updates and unregisters accessories by UUID, counting each call', () => {
    const { api, registered, calls } = createTestApi({ storagePath: tmpdir() });
    const accessory = newAccessory(api, 'Front Door');
    api.registerPlatformAccessories('homebridge-doorbell-motion', 'DoorbellMotion', [accessory]);
    expect(registered.get(accessory.UUID)).toBe(accessory);
    expect(accessory._associatedPlatform).toBe('DoorbellMotion');

    api.updatePlatformAccessories([accessory]);
    api.unregisterPlatformAccessories('homebridge-doorbell-motion', 'DoorbellMotion', [accessory]);
    expect(registered.size).toBe(0);
    expect(calls).toEqual({ register: 1, unregister: 1, update: 1 });
  });

  it('keeps the first of two accessories with one UUID, as Homebridge does', () => {
    const { api, registered } = createTestApi({ storagePath: tmpdir() });
    const first = newAccessory(api, 'Front Door');
    api.registerPlatformAccessories('p', 'P', [first, newAccessory(api, 'Front Door')]);
    expect([...registered.values()]).toEqual([first]);
  });

  it('bridges 149 accessories and throws for one more, as HAP-NodeJS does under Homebridge', () => {
    const { api, bridge, registered } = createTestApi({ storagePath: tmpdir() });
    const doorbells = (from: number, count: number) => Array.from({ length: count }, (_, index) => newAccessory(api, `Doorbell ${from + index}`));
    api.registerPlatformAccessories('p', 'P', doorbells(0, 149));
    expect(bridge.bridgedAccessories).toHaveLength(149);

    expect(() => api.registerPlatformAccessories('p', 'P', doorbells(149, 1))).toThrow('Cannot Bridge more than 149 Accessories');
    expect(registered.size).toBe(149);
  });

  it('refuses to unregister an object it did not register, like the HAP bridge', () => {
    const cached = newAccessory(createTestApi({ storagePath: tmpdir() }).api, 'Front Door');
    const { api, registered } = createTestApi({ storagePath: tmpdir(), cachedAccessories: [cached] });
    expect(() => api.unregisterPlatformAccessories('p', 'P', [reloadFromCache(cached)])).toThrow(
      'Cannot find the bridged Accessory',
    );
    api.unregisterPlatformAccessories('p', 'P', [cached]);
    expect(registered.size).toBe(0);
  });

  it('signals launch and shutdown and answers the version and storage questions', () => {
    const { api, launch, shutdown, platforms } = createTestApi({ storagePath: '/var/lib/homebridge' });
    const events: string[] = [];
    api.on('didFinishLaunching', () => events.push('launched')).on('shutdown', () => events.push('shut down'));
    launch();
    shutdown();
    expect(events).toEqual(['launched', 'shut down']);
    expect(api.user.storagePath()).toBe('/var/lib/homebridge');
    expect(api.serverVersion).toBe('2.4.0');
    expect(api.versionGreaterOrEqual('1.8.0')).toBe(true);
    expect(api.versionGreaterOrEqual('2.4.0-beta.3')).toBe(true);
    expect(api.versionGreaterOrEqual('2.5.0')).toBe(false);

    class Platform {}
    api.registerPlatform('DoorbellMotion', Platform);
    expect(platforms.get('DoorbellMotion')).toBe(Platform);
  });
});

describe('createTestLogger', () => {
  it('records lines written through Homebridge’s Logging and through the plugin’s Logger', () => {
    const log = createTestLogger();
    log('listening on %d', 47850);
    log.success('registered');
    const logger: Logger = log;
    logger.warn('careful');
    expect(log.lines).toEqual([
      { level: 'info', message: 'listening on 47850' },
      { level: 'success', message: 'registered' },
      { level: 'warn', message: 'careful' },
    ]);
  });
});
