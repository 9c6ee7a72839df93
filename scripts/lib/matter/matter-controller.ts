/**
 * A Matter controller (matter.js) for the tests: it commissions a bridge with its manual pairing code,
 * as a phone does when a user adds the bridge to Google Home or Alexa, then keeps a subscription to
 * every attribute and event, and reports what it reads and receives. It runs inside the private
 * network (private-network-host.ts), where it reaches the bridge on `::1` and the bridge's Matter port:
 * there is no discovery there, since matter.js's mDNS ignores loopback interfaces.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as MainModule from '@matter/main';
import type * as TypesModule from '@matter/types';
import type * as ProtocolModule from '@matter/protocol';
import type * as ControllerModule from '@project-chip/matter.js';
import type { PairedNode } from '@project-chip/matter.js/device';

/** Reports from the moment it is asked, with no floor of its own (matter.js's default is 1 s). */
const SUBSCRIPTION = { subscribeMinIntervalFloorSeconds: 0 } as const;

/** An endpoint as the controller reads it from the bridge; a bridged device has a node label. */
export interface MatterEndpoint {
  endpoint: number;
  /** Matter device type ids (see MatterDeviceType), the bridged-node type (0x13) left out. */
  deviceTypes: number[];
  nodeLabel?: string;
  serialNumber?: string;
  vendorName?: string;
  productName?: string;
  reachable?: boolean;
  occupied?: boolean;
  occupancyFeatures?: Record<string, boolean>;
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
  /** A folder whose `node_modules` holds the bridge's `@matter/*` and `@project-chip/matter.js`. */
  matterRoot: string;
  /** The controller's fabric and the nodes it commissioned; kept across restarts of the bridge. */
  storagePath: string;
  /** The bridge's Matter port on `::1`. */
  bridgePort: number;
  /** Used unless the controller's storage holds the bridge already. */
  pairingCode: string;
}

const BRIDGED_NODE_DEVICE_TYPE = 0x13;

export class MatterTestController {
  private constructor(
    private readonly controller: ControllerModule.CommissioningController,
    private readonly node: PairedNode,
  ) {}

  /** Starts the controller, commissions the bridge unless it did before, and reads every endpoint of it. */
  static async connect(settings: ControllerSettings, onChange: (change: MatterChange) => void): Promise<MatterTestController> {
    const matter = loadMatterPackages(settings.matterRoot);
    // Its notices would fill the test's output; its errors still show.
    matter.main.Logger.level = 'error';
    const environment = matter.main.Environment.default;
    environment.vars.set('storage.path', settings.storagePath);
    const controller = new matter.controller.CommissioningController({
      environment: { environment, id: 'test-controller' },
      autoConnect: false,
      adminFabricLabel: 'Doorbell Motion tests',
    });
    await controller.start();
    const bridgeAddress = { type: 'udp' as const, ip: '::1', port: settings.bridgePort };
    // After the operational certificate is installed, commissioning reconnects to the node at its
    // operational address, which it would look up by mDNS. Every peer starts with the bridge's address.
    controller.node.env.get(matter.protocol.PeerSet).added.on((peer) => {
      peer.descriptor.operationalAddress ??= bridgeAddress;
    });
    if (!controller.isCommissioned()) {
      const { passcode, shortDiscriminator } = matter.types.ManualPairingCodeCodec.decode(settings.pairingCode);
      await controller.commissionNode({
        ...SUBSCRIPTION,
        // Indoor and outdoor: a bridge has no radio for the regulatory location to matter to.
        commissioning: { regulatoryLocation: 2, regulatoryCountryCode: 'XX' },
        discovery: { knownAddress: bridgeAddress, identifierData: { shortDiscriminator } },
        passcode,
      });
    }
    const node = await controller.getNode(controller.getCommissionedNodes()[0]);
    const report = (kind: MatterChange['kind'], endpoint: number, clusterId: number, name: string, value: unknown): void =>
      onChange({ kind, endpoint: Number(endpoint), clusterId: Number(clusterId), name, value, at: performance.timeOrigin + performance.now() });
    node.events.attributeChanged.on(({ path, value }) => report('attribute', path.endpointId, path.clusterId, path.attributeName, value));
    node.events.eventTriggered.on(({ path, events }) => events.forEach((event) => report('event', path.endpointId, path.clusterId, path.eventName, event.data)));
    if (!node.remoteInitializationDone || !node.isConnected) {
      const initialized = node.events.initializedFromRemote;
      node.connect(SUBSCRIPTION);
      await initialized;
    }
    return new MatterTestController(controller, node);
  }

  /** Every endpoint of the bridge, as the subscription has it now. */
  endpoints(): MatterEndpoint[] {
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

  close(): Promise<void> {
    return this.controller.close();
  }
}

/**
 * matter.js from the folder where the Homebridge under test is installed, so that the controller
 * runs the bridge's version; required from there, since a bare import here would resolve to the
 * repository's copy. Types come from the repository's copy (the same API).
 */
function loadMatterPackages(root: string) {
  const require = createRequire(join(root, 'package.json'));
  // `@matter/main` first: loading it installs the Node.js platform (crypto, network, storage).
  const main = require('@matter/main') as typeof MainModule;
  return {
    main,
    types: require('@matter/types') as typeof TypesModule,
    protocol: require('@matter/protocol') as typeof ProtocolModule,
    controller: require('@project-chip/matter.js') as typeof ControllerModule,
  };
}

/** The parts of a bridged endpoint's state these tests read. */
interface EndpointState {
  descriptor: { deviceTypeList: ReadonlyArray<{ deviceType: number }> };
  bridgedDeviceBasicInformation: { nodeLabel?: string; serialNumber?: string; vendorName?: string; productName?: string; reachable?: boolean };
  occupancySensing: { occupancy: { occupied?: boolean }; featureMap: Record<string, boolean> };
  switch: { numberOfPositions: number; featureMap: Record<string, boolean> };
  booleanState: { stateValue: boolean };
}
