/**
 * A Matter controller (matter.js) for the tests: it commissions a bridge with its manual pairing code,
 * as a phone does when a user adds the bridge to Google Home or Alexa, then keeps a subscription to
 * every attribute and event, and reports what it reads and receives. It runs inside the private
 * network (private-network-host.ts), where it reaches the bridge on `::1` and the bridge's Matter port:
 * there is no discovery there, since matter.js's mDNS ignores loopback interfaces.
 */
import type { CommissioningController, NodeCommissioningOptions } from '@project-chip/matter.js';
import type { PairedNode } from '@project-chip/matter.js/device';
import { loadMatterPackages, type MatterPackages } from './matter-packages.js';

/** Reports from the moment it is asked, with no floor of its own (matter.js's default is 1 s). */
const SUBSCRIPTION = { subscribeMinIntervalFloorSeconds: 0 } as const;

/** An endpoint as the controller reads it from the bridge; a bridged device has a node label. */
export interface MatterEndpoint {
  endpoint: number;
  /**
   * Matter device type ids, the bridged-node type (0x13) left out: 0x16 the root node, 0xE the
   * aggregator, 0x107 an occupancy sensor, 0xF a generic switch, 0x15 a contact sensor.
   */
  deviceTypes: number[];
  nodeLabel?: string;
  serialNumber?: string;
  vendorName?: string;
  productName?: string;
  reachable?: boolean;
  occupied?: boolean;
  /** The OccupancySensing cluster's features, when the device has it. */
  occupancyFeatures?: Record<string, boolean>;
  /** The Switch cluster's features, when the device has it. */
  switchFeatures?: Record<string, boolean>;
  numberOfPositions?: number;
  /** A contact sensor's BooleanState: true while the contact is closed. */
  contactClosed?: boolean;
}

/** An attribute report or an event, as it arrived, with the controller's clock. */
export interface MatterChange {
  kind: 'attribute' | 'event';
  endpoint: number;
  clusterId: number;
  /** The attribute's or event's name, e.g. `occupancy`, `initialPress`. */
  name: string;
  value: unknown;
  /** performance.timeOrigin + performance.now() when it arrived, comparable across processes. */
  at: number;
}

export interface ControllerSettings {
  /** Where the matter.js packages matching the bridge's are (see matter-packages.ts). */
  matterRoot: string;
  /** The controller's fabric and the nodes it commissioned; kept across restarts of the bridge. */
  storagePath: string;
  /** The bridge's Matter port on `::1`. */
  bridgePort: number;
}

const BRIDGED_NODE_DEVICE_TYPE = 0x13;

export class MatterTestController {
  private node: PairedNode | undefined;

  private constructor(
    private readonly packages: MatterPackages,
    private readonly controller: CommissioningController,
    private readonly bridgePort: number,
    private readonly onChange: (change: MatterChange) => void,
  ) {}

  static async start(settings: ControllerSettings, onChange: (change: MatterChange) => void): Promise<MatterTestController> {
    const packages = await loadMatterPackages(settings.matterRoot);
    const { Environment, Logger } = packages.main;
    // Its notices would fill the test's output; its errors still show.
    Logger.level = 'error';
    const environment = Environment.default;
    environment.vars.set('storage.path', settings.storagePath);
    const controller = new packages.controller.CommissioningController({
      environment: { environment, id: 'test-controller' },
      autoConnect: false,
      adminFabricLabel: 'Doorbell Motion tests',
    });
    await controller.start();
    const self = new MatterTestController(packages, controller, settings.bridgePort, onChange);
    self.knowOperationalAddress();
    return self;
  }

  /** Commissions the bridge with its manual pairing code, unless this controller already has. */
  async commission(pairingCode: string): Promise<void> {
    if (this.controller.isCommissioned()) {
      return;
    }
    const { passcode, shortDiscriminator } = this.packages.types.ManualPairingCodeCodec.decode(pairingCode);
    const options: NodeCommissioningOptions = {
      ...SUBSCRIPTION,
      // Indoor and outdoor: a bridge has no radio for the regulatory location to matter to.
      commissioning: { regulatoryLocation: 2, regulatoryCountryCode: 'XX' },
      discovery: { knownAddress: this.bridgeAddress(), identifierData: { shortDiscriminator } },
      passcode,
    };
    await this.controller.commissionNode(options);
  }

  /** Connects to the commissioned bridge and waits until it has read every endpoint from it. */
  async connect(): Promise<void> {
    const [nodeId] = this.controller.getCommissionedNodes();
    if (nodeId === undefined) {
      throw new Error('Nothing is commissioned yet');
    }
    const node = await this.controller.getNode(nodeId);
    this.node = node;
    node.events.attributeChanged.on(({ path, value }) => this.report('attribute', path.endpointId, path.clusterId, path.attributeName, value));
    node.events.eventTriggered.on(({ path, events }) => {
      for (const event of events) {
        this.report('event', path.endpointId, path.clusterId, path.eventName, event.data);
      }
    });
    if (!node.remoteInitializationDone || !node.isConnected) {
      const initialized = node.events.initializedFromRemote;
      node.connect(SUBSCRIPTION);
      await initialized;
    }
  }

  /** Every endpoint of the bridge, as the subscription has it now. */
  endpoints(): MatterEndpoint[] {
    if (this.node === undefined) {
      throw new Error('Not connected');
    }
    return this.node.node.endpoints.map((endpoint) => {
      const state = endpoint.state as Partial<EndpointState>;
      const info = state.bridgedDeviceBasicInformation;
      return {
        endpoint: Number(endpoint.number),
        deviceTypes: (state.descriptor?.deviceTypeList ?? []).map(({ deviceType }) => Number(deviceType)).filter((type) => type !== BRIDGED_NODE_DEVICE_TYPE),
        nodeLabel: info?.nodeLabel,
        serialNumber: info?.serialNumber,
        vendorName: info?.vendorName,
        productName: info?.productName,
        reachable: info?.reachable,
        occupied: state.occupancySensing?.occupancy.occupied,
        occupancyFeatures: state.occupancySensing?.featureMap,
        switchFeatures: state.switch?.featureMap,
        numberOfPositions: state.switch?.numberOfPositions,
        contactClosed: state.booleanState?.stateValue,
      };
    });
  }

  async close(): Promise<void> {
    await this.controller.close();
  }

  /**
   * After the operational certificate is installed, commissioning reconnects to the node at its
   * operational address, which it would look up by mDNS. Every peer starts with the bridge's address.
   */
  private knowOperationalAddress(): void {
    const peers = this.controller.node.env.get(this.packages.protocol.PeerSet);
    peers.added.on((peer) => {
      peer.descriptor.operationalAddress ??= this.bridgeAddress();
    });
  }

  private bridgeAddress() {
    return { type: 'udp' as const, ip: '::1', port: this.bridgePort };
  }

  private report(kind: MatterChange['kind'], endpoint: number, clusterId: number, name: string, value: unknown): void {
    this.onChange({ kind, endpoint: Number(endpoint), clusterId: Number(clusterId), name, value, at: performance.timeOrigin + performance.now() });
  }
}

/** The parts of a bridged endpoint's state these tests read. */
interface EndpointState {
  descriptor: { deviceTypeList: ReadonlyArray<{ deviceType: number }> };
  bridgedDeviceBasicInformation: { nodeLabel?: string; serialNumber?: string; vendorName?: string; productName?: string; reachable?: boolean };
  occupancySensing: { occupancy: { occupied?: boolean }; featureMap: Record<string, boolean> };
  switch: { numberOfPositions: number; featureMap: Record<string, boolean> };
  booleanState: { stateValue: boolean };
}
