/**
 * The test's side of the Matter controller that runs inside the private network (matter-controller.ts):
 * requests over the host's channel, and every attribute report and event the controller received.
 */
import type { JsonLinesPeer } from './json-lines.js';
import type { ControllerSettings, MatterChange, MatterEndpoint } from './matter-controller.js';
import { ClaimQueue } from '../claim-queue.js';

export type { MatterChange, MatterEndpoint } from './matter-controller.js';

/** Starting the controller loads matter.js (about a second); commissioning takes about one more. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Matter cluster ids the tests watch. */
export const MatterCluster = {
  BridgedDeviceBasicInformation: 0x39,
  Switch: 0x3b,
  OccupancySensing: 0x406,
} as const;

/** Matter device type ids. */
export const MatterDeviceType = {
  Aggregator: 0x0e,
  GenericSwitch: 0x0f,
  ContactSensor: 0x15,
  RootNode: 0x16,
  OccupancySensor: 0x107,
} as const;

export class MatterTestClient {
  /** Changes received and not yet handed out by nextChange, oldest first. */
  private readonly unclaimed = new ClaimQueue<MatterChange>('Matter report');
  /** Every change received, for checks over a whole run. */
  readonly changes: MatterChange[] = [];

  constructor(private readonly channel: JsonLinesPeer) {
    channel.onEvent((event, data) => {
      if (event === 'change') {
        const change = data as MatterChange;
        this.changes.push(change);
        this.unclaimed.push(change);
      }
    });
  }

  /** Starts the controller on its storage (a fresh one, or the fabric of an earlier run). */
  async start(settings: ControllerSettings): Promise<void> {
    await this.channel.request('start', settings, REQUEST_TIMEOUT_MS);
  }

  /** Commissions the bridge with the manual pairing code from Homebridge's log, unless done before. */
  async commission(pairingCode: string): Promise<void> {
    await this.channel.request('commission', { pairingCode }, REQUEST_TIMEOUT_MS);
  }

  /** Connects and reads the whole bridge; subscribed to every attribute and event from then on. */
  async connect(): Promise<void> {
    await this.channel.request('connect', undefined, REQUEST_TIMEOUT_MS);
  }

  /** Every endpoint of the bridge: the root node, the aggregator, the bridged devices. */
  async endpoints(): Promise<MatterEndpoint[]> {
    return (await this.channel.request('endpoints', undefined, REQUEST_TIMEOUT_MS)) as MatterEndpoint[];
  }

  /** The bridged devices: the endpoints with a node label. */
  async bridgedDevices(): Promise<MatterEndpoint[]> {
    return (await this.endpoints()).filter((endpoint) => endpoint.nodeLabel !== undefined);
  }

  /** The bridged device with this node label; throws, naming those there are, when none has it. */
  async endpointNamed(nodeLabel: string): Promise<MatterEndpoint> {
    const endpoints = await this.bridgedDevices();
    const found = endpoints.find((endpoint) => endpoint.nodeLabel === nodeLabel);
    if (found === undefined) {
      throw new Error(`No bridged device is called ${nodeLabel}; the bridge has ${endpoints.map((endpoint) => endpoint.nodeLabel).join(', ')}`);
    }
    return found;
  }

  /**
   * The oldest change received and not handed out yet that matches, waiting up to `timeoutMs` for
   * one. Changes before it that do not match are dropped: each call moves forward.
   */
  nextChange(matches: (change: MatterChange) => boolean, timeoutMs: number): Promise<MatterChange> {
    return this.unclaimed.next(matches, timeoutMs);
  }
}

/** For nextChange: this endpoint's occupancy reported as `occupied`. */
export function occupancyOf(endpoint: number, occupied: boolean): (change: MatterChange) => boolean {
  return (change) =>
    change.kind === 'attribute' &&
    change.endpoint === endpoint &&
    change.clusterId === MatterCluster.OccupancySensing &&
    change.name === 'occupancy' &&
    (change.value as { occupied?: boolean }).occupied === occupied;
}

/** For nextChange: an event of this endpoint's Switch cluster (`initialPress`, `shortRelease`). */
export function switchEventOf(endpoint: number, name: string): (change: MatterChange) => boolean {
  return (change) => change.kind === 'event' && change.endpoint === endpoint && change.clusterId === MatterCluster.Switch && change.name === name;
}
