/**
 * The test's side of the Matter controller that runs inside the private network (matter-controller.ts):
 * requests over the host's IPC channel, and every attribute report and event the controller received.
 */
import type { ChildProcess } from 'node:child_process';
import { withTimeout } from '../timeout.js';
import { ClaimQueue } from '../claim-queue.js';
import type { ControllerSettings, MatterChange, MatterEndpoint } from './matter-controller.js';
import type { HostMessage, HostRequest } from './private-network-host.js';

export type { MatterChange, MatterEndpoint } from './matter-controller.js';

/** Loading matter.js, commissioning and reading every endpoint, on a slow machine. */
export const CONNECT_TIMEOUT_MS = 60_000;

/** A read of what the controller holds already: quick, unless the host stopped answering. */
const READ_TIMEOUT_MS = 30_000;

/** Matter cluster ids the tests watch. */
export const MatterCluster = {
  Switch: 0x3b,
  OccupancySensing: 0x406,
} as const;

/** Matter device type ids. */
export const MatterDeviceType = {
  GenericSwitch: 0x0f,
  ContactSensor: 0x15,
  OccupancySensor: 0x107,
} as const;

type Answer = Extract<HostMessage, { id: number }>;

export class MatterTestClient {
  /** Changes received and not yet handed out by nextChange, oldest first. */
  private readonly unclaimed = new ClaimQueue<MatterChange>('Matter report');
  /** Every change received, for checks over a whole run. */
  readonly changes: MatterChange[] = [];
  /** Requests sent and not answered yet, by id. */
  private readonly waiting = new Map<number, (answer: Answer) => void>();
  private nextId = 1;

  private constructor(private readonly host: ChildProcess) {
    host.on('message', (message: HostMessage) => {
      if ('change' in message) {
        this.changes.push(message.change);
        this.unclaimed.push(message.change);
      } else if ('id' in message) {
        this.waiting.get(message.id)?.(message);
      }
    });
    host.once('disconnect', () => this.waiting.forEach((settle, id) => settle({ id, error: new Error('The private network\'s host ended before answering') })));
  }

  /**
   * Starts the controller in the private network of `host`, commissions the bridge unless the
   * controller's storage holds it from an earlier run, and reads every endpoint; subscribed to every
   * attribute and event from then on.
   */
  static async connect(host: ChildProcess, settings: ControllerSettings): Promise<MatterTestClient> {
    const client = new MatterTestClient(host);
    await client.request({ method: 'connect', settings }, CONNECT_TIMEOUT_MS);
    return client;
  }

  /** Every endpoint of the bridge: the root node, the aggregator, the bridged devices. */
  async endpoints(): Promise<MatterEndpoint[]> {
    return (await this.request({ method: 'endpoints' }, READ_TIMEOUT_MS)) as MatterEndpoint[];
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

  /** The host's answer; rejects with its error, on timeout, or when the host ends first. */
  private request(request: HostRequest, timeoutMs: number): Promise<unknown> {
    const id = this.nextId++;
    const answer = new Promise<unknown>((resolve, reject) => {
      this.waiting.set(id, ({ result, error }) => (error === undefined ? resolve(result) : reject(error)));
      this.host.send({ id, ...request }, (error) => {
        if (error !== null) {
          reject(error);
        }
      });
    });
    return withTimeout(answer, timeoutMs, request.method).finally(() => this.waiting.delete(id));
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
