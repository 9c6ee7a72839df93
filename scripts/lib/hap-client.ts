/**
 * A HomeKit controller for the e2e tests: it pairs with a bridge and talks HAP over IP to it as the
 * Home app does, on 127.0.0.1 and the bridge's port (no mDNS discovery).
 */
// The transport module itself: the package entry point also loads the Bluetooth stack (noble) and
// the mDNS browser, neither of which a loopback controller needs.
import httpClientModule from 'hap-controller/lib/transport/ip/http-client.js';
import type { ServiceObject } from 'hap-controller/lib/model/service.js';
import type { PairingData } from 'hap-controller/lib/protocol/pairing-protocol.js';
import { withTimeout } from './timeout.js';
import { ClaimQueue } from './claim-queue.js';

const HttpClient = httpClientModule.default;
type HttpClient = InstanceType<typeof HttpClient>;

const LOOPBACK = '127.0.0.1';

/** hap-controller sets no timeouts of its own; a bridge that stops answering must fail the test. */
const REQUEST_TIMEOUT_MS = 10_000;

/** Apple's base UUID: every HAP-defined type is `<short type>-0000-1000-8000-0026BB765291`. */
function hapType(shortType: string): string {
  return `${shortType.padStart(8, '0')}-0000-1000-8000-0026BB765291`;
}

export const HapService = {
  AccessoryInformation: hapType('3E'),
  MotionSensor: hapType('85'),
  Doorbell: hapType('121'),
  StatelessProgrammableSwitch: hapType('89'),
  Switch: hapType('49'),
  ContactSensor: hapType('80'),
  Battery: hapType('96'),
} as const;

export const HapCharacteristic = {
  Manufacturer: hapType('20'),
  Model: hapType('21'),
  Name: hapType('23'),
  ConfiguredName: hapType('E3'),
  SerialNumber: hapType('30'),
  MotionDetected: hapType('22'),
  StatusFault: hapType('77'),
  ProgrammableSwitchEvent: hapType('73'),
  On: hapType('25'),
  ContactSensorState: hapType('6A'),
  BatteryLevel: hapType('68'),
  StatusLowBattery: hapType('79'),
  ChargingState: hapType('8F'),
} as const;

/** Where a characteristic lives (accessory and characteristic instance ids), and its value format. */
export interface CharacteristicRef {
  aid: number;
  iid: number;
  format: string | undefined;
}

/** A value change as the bridge sent it. */
export interface CharacteristicEvent {
  aid: number;
  iid: number;
  value: unknown;
}

/** hap-controller names characteristics as `"aid.iid"` strings. */
function characteristicId({ aid, iid }: { aid: number; iid: number }): string {
  return `${aid}.${iid}`;
}

/** hap-nodejs sends `bool` values as 1 and 0, which HAP allows; the Home app sees true and false. */
function decodeValue({ format }: CharacteristicRef, value: unknown): unknown {
  return format === 'bool' && typeof value === 'number' ? value !== 0 : value;
}

/** For nextEvent: the characteristic changed to `value` (a boolean for `bool` characteristics). */
export function changeOf(characteristic: CharacteristicRef, value: unknown): (event: CharacteristicEvent) => boolean {
  return (event) =>
    event.aid === characteristic.aid && event.iid === characteristic.iid && decodeValue(characteristic, event.value) === value;
}

/** One accessory of the bridge's attribute database, as `GET /accessories` returned it. */
export class HapAccessory {
  constructor(
    readonly aid: number,
    readonly services: ServiceObject[],
  ) {}

  get name(): unknown {
    return this.valueOf(HapService.AccessoryInformation, HapCharacteristic.Name);
  }

  get serialNumber(): unknown {
    return this.valueOf(HapService.AccessoryInformation, HapCharacteristic.SerialNumber);
  }

  /**
   * The service as listed, with its primary flag and its characteristics' properties; undefined when
   * the accessory lacks it. With `name`, the one of that type with that Name: HAP does not show a
   * controller the subtypes that tell a plugin's services of one type apart, only their names.
   */
  service(serviceType: string, name?: string): ServiceObject | undefined {
    return this.services.find((service) => service.type === serviceType && (name === undefined || nameOf(service) === name));
  }

  /** The Names of the services of this type, in the order listed. */
  namesOf(serviceType: string): unknown[] {
    return this.services.filter((service) => service.type === serviceType).map(nameOf);
  }

  /** The characteristic, to read or subscribe to; throws when the accessory lacks it. `serviceName` as for service(). */
  characteristic(serviceType: string, characteristicType: string, serviceName?: string): CharacteristicRef {
    const found = this.findCharacteristic(serviceType, characteristicType, serviceName);
    if (found?.iid === undefined) {
      throw new Error(`Accessory ${this.aid} has no characteristic ${characteristicType} in service ${serviceName ?? serviceType}`);
    }
    return { aid: this.aid, iid: found.iid, format: found.format };
  }

  /** The value at the time of listing; read the characteristic for the current one. */
  valueOf(serviceType: string, characteristicType: string): unknown {
    return this.findCharacteristic(serviceType, characteristicType)?.value;
  }

  /** The characteristic as listed, with its properties (`valid-values`, say). */
  findCharacteristic(serviceType: string, characteristicType: string, serviceName?: string) {
    return this.service(serviceType, serviceName)?.characteristics.find((characteristic) => characteristic.type === characteristicType);
  }
}

function nameOf(service: ServiceObject): unknown {
  return service.characteristics.find((characteristic) => characteristic.type === HapCharacteristic.Name)?.value;
}

/** The accessory with this serial number (a doorbell's is its device id); throws, listing the others, when there is none. */
export function findBySerialNumber(accessories: readonly HapAccessory[], serialNumber: string): HapAccessory {
  const found = accessories.find((accessory) => accessory.serialNumber === serialNumber);
  if (found === undefined) {
    const listed = accessories.map((accessory) => `${accessory.aid}: ${String(accessory.serialNumber)}`).join(', ');
    throw new Error(`No accessory has serial number ${serialNumber}; the bridge lists ${listed}`);
  }
  return found;
}

export interface BridgeAddress {
  port: number;
  /** The bridge's `username`, its HAP device id. */
  username: string;
}

export class HapTestClient {
  /** Characteristic changes the bridge sent and nextEvent has not handed out yet, oldest first. */
  private readonly events = new ClaimQueue<CharacteristicEvent>('HAP event');
  private subscribed = false;

  private constructor(
    private readonly client: HttpClient,
    private readonly bridge: BridgeAddress,
  ) {
    client.on('event', (body: { characteristics: CharacteristicEvent[] }) => {
      this.events.push(...body.characteristics);
    });
  }

  /** Adds a new controller to the bridge with its setup PIN (pair-setup), as adding it in Home does. */
  static async pair(bridge: BridgeAddress, pin: string): Promise<HapTestClient> {
    const controller = new HapTestClient(newHttpClient(bridge), bridge);
    try {
      await controller.request(controller.client.pairSetup(pin), 'pair-setup');
    } catch (error) {
      await controller.close();
      throw error;
    }
    return controller;
  }

  /**
   * A second connection of this same controller, with its pairing (no new pair-setup), as the Home
   * app opens several: each connection is sent the events it subscribed to and no others.
   */
  anotherConnection(): HapTestClient {
    const pairing = this.client.getLongTermData();
    if (pairing === null) {
      throw new Error('This controller is not paired yet');
    }
    return new HapTestClient(newHttpClient(this.bridge, pairing), this.bridge);
  }

  async accessories(): Promise<HapAccessory[]> {
    const { accessories } = await this.request(this.client.getAccessories(), 'GET /accessories');
    return accessories.map(({ aid, services }) => new HapAccessory(aid, services));
  }

  /** The accessory with this serial number (a doorbell's is its device id); throws when there is none. */
  async accessoryWithSerialNumber(serialNumber: string): Promise<HapAccessory> {
    return findBySerialNumber(await this.accessories(), serialNumber);
  }

  /** The current values, in the order asked, as the Home app sees them (booleans for `bool`). */
  async read(...characteristics: CharacteristicRef[]): Promise<unknown[]> {
    const ids = characteristics.map(characteristicId);
    const response = await this.request(this.client.getCharacteristics(ids), 'GET /characteristics');
    const valueById = new Map(response.characteristics.map((read) => [characteristicId(read as CharacteristicEvent), read.value]));
    return characteristics.map((characteristic) => decodeValue(characteristic, valueById.get(characteristicId(characteristic))));
  }

  /** Writes a value as the Home app does when a switch is flipped; rejects when the bridge refuses it. */
  async write(characteristic: CharacteristicRef, value: unknown): Promise<void> {
    const answer = await this.request(this.client.setCharacteristics({ [characteristicId(characteristic)]: value }), 'PUT /characteristics');
    // 204 (all written) comes back as the request itself; 207 lists a status per characteristic.
    const refused = (answer.characteristics as Array<{ status?: number }>).filter(({ status }) => status !== undefined && status !== 0);
    if (refused.length > 0) {
      throw new Error(`The bridge refused the write with HAP status ${refused.map(({ status }) => status).join(', ')}`);
    }
  }

  /**
   * Asks for change events, which nextEvent then hands out. Once per controller: hap-controller adds
   * a second decrypting reader to the connection on a second call, and the two then spin forever on
   * frames neither can decrypt, blocking the test process.
   */
  async subscribe(...characteristics: CharacteristicRef[]): Promise<void> {
    if (this.subscribed) {
      throw new Error('HapTestClient.subscribe may be called once: subscribe to every characteristic a test needs at once');
    }
    this.subscribed = true;
    await this.request(this.client.subscribeCharacteristics(characteristics.map(characteristicId)), 'subscribe');
  }

  /**
   * The oldest event received since subscribing that matches (see changeOf), waiting up to
   * `timeoutMs` for one. Events before it that do not match are dropped: each call moves forward.
   */
  nextEvent(matches: (event: CharacteristicEvent) => boolean, timeoutMs: number): Promise<CharacteristicEvent> {
    return this.events.next(matches, timeoutMs);
  }


  /**
   * Closes every connection this controller opened: requests, pairing and events. Do it before the
   * bridge stops: a later request then connects and pair-verifies again, as the Home app does after
   * a restart, while a connection the bridge dropped would keep its dead session keys.
   */
  async close(): Promise<void> {
    await this.client.close();
  }

  private request<T>(operation: Promise<T>, what: string): Promise<T> {
    return withTimeout(operation, REQUEST_TIMEOUT_MS, `HAP ${what}`);
  }
}

function newHttpClient({ username, port }: BridgeAddress, pairing?: PairingData): HttpClient {
  // One persistent, verified connection for requests, as the Home app keeps: without it every
  // request would pair-verify again on a new connection.
  return new HttpClient(username, LOOPBACK, port, pairing, { usePersistentConnections: true });
}
