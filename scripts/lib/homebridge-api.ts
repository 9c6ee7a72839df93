import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { format } from 'node:util';
import { hap } from './hap.js';
import type { API, Logging, LogLevel, PlatformAccessory as PlatformAccessoryType, PlatformPluginConstructor } from 'homebridge';
import type { Logger } from '../../src/log.js';

/** The API version Homebridge 2.1 to 2.4 report as `api.version`. */
const API_VERSION = 2.7;

/**
 * Homebridge's own PlatformAccessory class, loaded from its file because its package exports only the
 * type (after hap.js, so it shares its HAP-NodeJS). The rest of its API cannot be loaded in a test:
 * its plugin manager calls a `require.resolve.paths('')` jest refuses.
 */
const homebridgeDist = dirname(createRequire(import.meta.url).resolve('homebridge'));
export const { PlatformAccessory } = (await import(join(homebridgeDist, 'platformAccessory.js'))) as { PlatformAccessory: typeof PlatformAccessoryType };
export type PlatformAccessory = PlatformAccessoryType;

/** The installed Homebridge's version, read from its package.json since its exports hide the file. */
const SERVER_VERSION: string = JSON.parse(readFileSync(join(homebridgeDist, '..', 'package.json'), 'utf8')).version;

/**
 * A Homebridge API over real HAP-NodeJS, so plugin code runs against real services and characteristics.
 * `storagePath` is what `api.user.storagePath()` answers; `cachedAccessories`, what Homebridge restored
 * from its cache, are already registered, as in Homebridge (the test passes each to the platform's
 * configureAccessory before launch()).
 */
export function createTestApi({ storagePath, cachedAccessories = [] }: { storagePath: string; cachedAccessories?: PlatformAccessoryType[] }) {
  /** The bridge's accessories by UUID, so tests can assert what is published after reconciling. */
  const registered = new Map<string, PlatformAccessoryType>();
  /** HAP's own bridge, with its rules: a HAP accessory is bridged once, and no more than 149 of them. */
  const bridge = new hap.Bridge('Test Bridge', hap.uuid.generate('doorbell-motion-test-bridge'));
  const platforms = new Map<string, PlatformPluginConstructor>();
  /** How often each accessory call was made, to catch needless re-registration and cache writes. */
  const calls = { register: 0, unregister: 0, update: 0 };
  const events = new EventEmitter();
  const bridged = (accessories: PlatformAccessoryType[]) => {
    // Throws as Homebridge's bridge does, past 149 accessories, out of the platform's call.
    bridge.addBridgedAccessories(accessories.map((accessory) => accessory._associatedHAPAccessory));
    accessories.forEach((accessory) => registered.set(accessory.UUID, accessory));
  };
  bridged(cachedAccessories);

  const api = Object.assign(events, {
    version: API_VERSION,
    serverVersion: SERVER_VERSION,
    hap,
    platformAccessory: PlatformAccessory,
    user: { storagePath: () => storagePath },
    versionGreaterOrEqual: (version: string) => releaseAtLeast(SERVER_VERSION, version),
    registerPlatform(...args: [string, PlatformPluginConstructor] | [string, string, PlatformPluginConstructor]) {
      const [platformName, constructor] = args.length === 2 ? args : [args[1], args[2]];
      platforms.set(platformName, constructor);
    },
    registerPlatformAccessories(pluginName: string, platformName: string, accessories: PlatformAccessoryType[]) {
      calls.register += 1;
      accessories.forEach((accessory) => Object.assign(assertPlatformAccessory(accessory, 'register'), { _associatedPlugin: pluginName, _associatedPlatform: platformName }));
      // Homebridge 2.1 logs a warning and skips an accessory whose UUID is already bridged, or comes
      // earlier in the same call.
      bridged(accessories.filter(({ UUID }, index) => !registered.has(UUID) && accessories.findIndex((other) => other.UUID === UUID) === index));
    },
    unregisterPlatformAccessories(_pluginName: string, _platformName: string, accessories: PlatformAccessoryType[]) {
      calls.unregister += 1;
      for (const accessory of accessories) {
        // HAP's bridge finds the accessory by identity and throws otherwise: a platform must hand back
        // the object it was given, not a new one with the same UUID.
        bridge.removeBridgedAccessory(assertPlatformAccessory(accessory, 'unregister')._associatedHAPAccessory, true);
        registered.delete(accessory.UUID);
      }
    },
    updatePlatformAccessories(accessories: PlatformAccessoryType[]) {
      calls.update += 1;
      accessories.forEach((accessory) => registered.set(accessory.UUID, accessory));
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
    /** Homebridge's signal that cached accessories are restored and the platform may start work. */
    launch: () => events.emit('didFinishLaunching'),
    /** Homebridge's signal to stop timers and servers before it exits. */
    shutdown: () => events.emit('shutdown'),
  };
}

/** Homebridge rejects anything but its own PlatformAccessory class with this TypeError. */
function assertPlatformAccessory(accessory: PlatformAccessoryType, action: 'register' | 'unregister'): PlatformAccessoryType {
  if (!(accessory instanceof PlatformAccessory)) {
    throw new TypeError(`attempt to ${action} an accessory that isn't PlatformAccessory!`);
  }
  return accessory;
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

export type TestApi = ReturnType<typeof createTestApi>;

/**
 * What a Homebridge restart hands the platform's configureAccessory: a new object rebuilt from the
 * cachedAccessories JSON, with the services and characteristic values of the last run.
 */
export function reloadFromCache({ _associatedPlugin: plugin, _associatedPlatform: platform, context, _associatedHAPAccessory }: PlatformAccessoryType): PlatformAccessoryType {
  return PlatformAccessory.deserialize(JSON.parse(JSON.stringify({ plugin, platform, context, ...hap.Accessory.serialize(_associatedHAPAccessory) })));
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
