import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { format } from 'node:util';
import { hap } from './hap.js';
import type { API, Logging, LogLevel, PlatformAccessory, PlatformPluginConstructor } from 'homebridge';
import type { Logger } from '../../src/log.js';
import { TestPlatformAccessory } from './platform-accessory.js';

/** The API version Homebridge 2.1 to 2.4 report as `api.version`. */
const API_VERSION = 2.7;

/** The installed Homebridge's version, read from its package.json since its exports hide the file. */
const SERVER_VERSION: string = JSON.parse(
  readFileSync(join(dirname(createRequire(import.meta.url).resolve('homebridge')), '..', 'package.json'), 'utf8'),
).version;

export interface TestApiOptions {
  /** What `api.user.storagePath()` answers: a temporary directory the test owns. */
  storagePath: string;
  /** Accessories Homebridge restored from its cache: already registered, as in Homebridge. The test
   *  passes each to the platform's configureAccessory before launch(). */
  cachedAccessories?: PlatformAccessory[];
}

export interface TestApi {
  /** Handed to the platform's constructor. */
  api: API;
  /** The bridge's accessories by UUID, so tests can assert what is published after reconciling. */
  registered: Map<string, PlatformAccessory>;
  /**
   * HAP's own bridge, holding the HAP accessory of each registered one as Homebridge's does, with its
   * rules: a HAP accessory is bridged once, and no more than 149 of them.
   */
  bridge: InstanceType<typeof hap.Bridge>;
  /** Platforms passed to api.registerPlatform, so the plugin's entry point can be tested. */
  platforms: Map<string, PlatformPluginConstructor>;
  /** Homebridge's signal that cached accessories are restored and the platform may start work. */
  launch(): void;
  /** Homebridge's signal to stop timers and servers before it exits. */
  shutdown(): void;
  /** How often each accessory call was made, to catch needless re-registration and cache writes. */
  calls: { register: number; unregister: number; update: number };
}

/** A Homebridge API over real HAP-NodeJS, so plugin code runs against real services and characteristics. */
export function createTestApi(options: TestApiOptions): TestApi {
  const registered = new Map<string, PlatformAccessory>();
  const bridge = new hap.Bridge('Test Bridge', hap.uuid.generate('doorbell-motion-test-bridge'));
  for (const accessory of options.cachedAccessories ?? []) {
    registered.set(accessory.UUID, accessory);
  }
  bridge.addBridgedAccessories([...registered.values()].map((accessory) => accessory._associatedHAPAccessory));
  const platforms = new Map<string, PlatformPluginConstructor>();
  const calls = { register: 0, unregister: 0, update: 0 };
  const events = new EventEmitter();

  const api = Object.assign(events, {
    version: API_VERSION,
    serverVersion: SERVER_VERSION,
    hap,
    platformAccessory: TestPlatformAccessory,
    user: { storagePath: () => options.storagePath },
    versionGreaterOrEqual: (version: string) => releaseAtLeast(SERVER_VERSION, version),
    registerPlatform(...args: [string, PlatformPluginConstructor] | [string, string, PlatformPluginConstructor]) {
      const [platformName, constructor] = args.length === 2 ? args : [args[1], args[2]];
      platforms.set(platformName, constructor);
    },
    registerPlatformAccessories(pluginName: string, platformName: string, accessories: PlatformAccessory[]) {
      calls.register += 1;
      const fresh: PlatformAccessory[] = [];
      for (const accessory of accessories) {
        assertPlatformAccessory(accessory, 'register');
        accessory._associatedPlugin = pluginName;
        accessory._associatedPlatform = platformName;
        // Homebridge 2.1 logs a warning and skips an accessory whose UUID is already bridged, or
        // comes earlier in the same call.
        if (!registered.has(accessory.UUID) && !fresh.some(({ UUID }) => UUID === accessory.UUID)) {
          fresh.push(accessory);
        }
      }
      // Throws as Homebridge's bridge does, past 149 accessories, out of the platform's call.
      bridge.addBridgedAccessories(fresh.map((accessory) => accessory._associatedHAPAccessory));
      fresh.forEach((accessory) => registered.set(accessory.UUID, accessory));
    },
    unregisterPlatformAccessories(_pluginName: string, _platformName: string, accessories: PlatformAccessory[]) {
      calls.unregister += 1;
      for (const accessory of accessories) {
        assertPlatformAccessory(accessory, 'unregister');
        // HAP's bridge finds the accessory by identity and throws otherwise: a platform must hand back
        // the object it was given, not a new one with the same UUID.
        if (registered.get(accessory.UUID) !== accessory) {
          throw new Error('Cannot find the bridged Accessory to remove.');
        }
        bridge.removeBridgedAccessory(accessory._associatedHAPAccessory, true);
        registered.delete(accessory.UUID);
      }
    },
    updatePlatformAccessories(accessories: PlatformAccessory[]) {
      calls.update += 1;
      for (const accessory of accessories) {
        registered.set(accessory.UUID, accessory);
      }
    },
  });

  return {
    // The one cast: members no plugin of ours uses (Matter, external accessories, the other User paths)
    // are left out rather than faked.
    api: api as unknown as API,
    registered,
    bridge,
    platforms,
    calls,
    launch: () => events.emit('didFinishLaunching'),
    shutdown: () => events.emit('shutdown'),
  };
}

/** Homebridge rejects anything but its own PlatformAccessory class with this TypeError. */
function assertPlatformAccessory(accessory: PlatformAccessory, action: 'register' | 'unregister'): void {
  if (!(accessory instanceof TestPlatformAccessory)) {
    throw new TypeError(`attempt to ${action} an accessory that isn't PlatformAccessory!`);
  }
}

/**
 * Homebridge's semver.gte(serverVersion, version) for a release serverVersion: with equal major, minor
 * and patch, a release ranks at or above any pre-release of it.
 */
function releaseAtLeast(serverVersion: string, version: string): boolean {
  const [have, want] = [serverVersion, version].map((v) => v.split('-')[0].split('.').map(Number));
  for (let i = 0; i < 3; i += 1) {
    if (have[i] !== want[i]) {
      return have[i] > want[i];
    }
  }
  return true;
}

export interface LogLine {
  level: `${LogLevel}`;
  message: string;
}

/** Usable as Homebridge's `Logging` (callable, printf-style) and as the plugin's own `Logger`. */
export type TestLogger = Logging & Logger & { readonly lines: LogLine[] };

/** A Homebridge logger whose every line, at every level, goes to `write`, formatted as Homebridge formats it. */
export function loggingTo(prefix: string, write: (level: `${LogLevel}`, message: string) => void): Logging & Logger {
  const log = (level: `${LogLevel}`, message: string, ...parameters: unknown[]) => write(level, format(message, ...parameters));
  const atLevel =
    (level: `${LogLevel}`) =>
    (message: string, ...parameters: unknown[]) =>
      log(level, message, ...parameters);
  return Object.assign(atLevel('info'), {
    prefix,
    log,
    info: atLevel('info'),
    success: atLevel('success'),
    warn: atLevel('warn'),
    error: atLevel('error'),
    debug: atLevel('debug'),
  });
}

/** Records every line instead of printing, so tests can assert what the user would read. */
export function createTestLogger(prefix = 'DoorbellMotion'): TestLogger {
  const lines: LogLine[] = [];
  return Object.assign(
    loggingTo(prefix, (level, message) => lines.push({ level, message })),
    { lines },
  );
}
