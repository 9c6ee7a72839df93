import { EventEmitter } from 'node:events';
import { hap } from './hap.js';
import type { Accessory, SerializedAccessory } from '@homebridge/hap-nodejs';
import type {
  Categories,
  ConstructorArgs,
  Controller,
  ControllerConstructor,
  PlatformAccessory,
  Service,
  UnknownContext,
  WithUUID,
} from 'homebridge';

/**
 * Homebridge 2.1 exports PlatformAccessory as a type only and its package exports forbid deep imports,
 * so tests use this stand-in: Homebridge's instance members, delegating to a real HAP Accessory as
 * Homebridge's own class does, so it type-checks as a PlatformAccessory without a cast.
 */
export class TestPlatformAccessory extends EventEmitter {
  /** Set by registerPlatformAccessories, as Homebridge does. */
  _associatedPlugin?: string;
  _associatedPlatform?: string;
  readonly _associatedHAPAccessory: Accessory;
  displayName: string;
  UUID: string;
  category: Categories;
  /** The HAP accessory's own array, so services added either way show up here. */
  readonly services: Service[];
  context: UnknownContext = {};

  constructor(displayName: string, uuid: string, category?: Categories, hapAccessory?: Accessory) {
    super();
    this._associatedHAPAccessory = hapAccessory ?? new hap.Accessory(displayName, uuid);
    this.displayName = this._associatedHAPAccessory.displayName;
    this.UUID = this._associatedHAPAccessory.UUID;
    if (category !== undefined) {
      this._associatedHAPAccessory.category = category;
    }
    this.category = this._associatedHAPAccessory.category;
    this.services = this._associatedHAPAccessory.services;
  }

  updateDisplayName(name: string): void {
    if (name) {
      this.displayName = name;
      this._associatedHAPAccessory.displayName = name;
    }
  }

  addService(service: Service): Service;
  addService<S extends typeof hap.Service>(serviceConstructor: S, ...constructorArgs: ConstructorArgs<S>): Service;
  addService(service: Service | typeof hap.Service, ...constructorArgs: unknown[]): Service {
    // The HAP method has the same two overloads; a single forwarding call can only name one of them.
    const forward = this._associatedHAPAccessory.addService as (...args: unknown[]) => Service;
    return forward.call(this._associatedHAPAccessory, service, ...constructorArgs);
  }

  removeService(service: Service): void {
    this._associatedHAPAccessory.removeService(service);
  }

  getService<T extends WithUUID<typeof hap.Service>>(name: string | T): Service | undefined {
    return this._associatedHAPAccessory.getService(name);
  }

  getServiceById<T extends WithUUID<typeof hap.Service>>(uuid: string | T, subType: string): Service | undefined {
    return this._associatedHAPAccessory.getServiceById(uuid, subType);
  }

  configureController(controller: Controller | ControllerConstructor): void {
    this._associatedHAPAccessory.configureController(controller);
  }

  removeController(controller: Controller): void {
    this._associatedHAPAccessory.removeController(controller);
  }
}

interface CachedAccessory extends SerializedAccessory {
  plugin?: string;
  platform?: string;
  context: UnknownContext;
}

/**
 * What a Homebridge restart hands the platform's configureAccessory: a new object rebuilt from the
 * cachedAccessories JSON, with the services and characteristic values of the last run.
 */
export function reloadFromCache(accessory: PlatformAccessory): TestPlatformAccessory {
  const cached: CachedAccessory = JSON.parse(
    JSON.stringify({
      plugin: accessory._associatedPlugin,
      platform: accessory._associatedPlatform,
      context: accessory.context,
      ...hap.Accessory.serialize(accessory._associatedHAPAccessory),
    }),
  );
  const hapAccessory = hap.Accessory.deserialize(cached);
  const restored = new TestPlatformAccessory(hapAccessory.displayName, hapAccessory.UUID, cached.category, hapAccessory);
  restored._associatedPlugin = cached.plugin;
  restored._associatedPlatform = cached.platform;
  restored.context = cached.context;
  return restored;
}
