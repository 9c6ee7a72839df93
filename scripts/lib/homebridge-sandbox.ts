/**
 * One Homebridge installation for a test file: storage in a fresh folder under os.tmpdir(), and its
 * own home, working and temp folders, so that a write outside the storage lands somewhere a test
 * can see it. dispose() stops every Homebridge it started, by pid, and removes it all.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startHomebridge,
  writeHomebridgeConfig,
  freeLoopbackPort,
  newBridgeIdentity,
  type BridgeSettings,
  type HomebridgeConfig,
  type HomebridgeLaunch,
  type HomebridgeProcess,
} from './homebridge-process.js';
import { snapshotFiles } from './file-snapshot.js';
import type { HomebridgeRuntime, MatterRuntime } from './homebridge-versions.js';
import { MatterTestClient } from './matter/matter-client.js';
import { startInPrivateNetwork } from './matter/private-network.js';

/**
 * Printed by Homebridge 1 and 2 alike once the HAP bridge is published. A bridge with Matter on
 * prints a second "is running" line, with the Matter.js version, for its Matter server.
 */
export const RUNNING_LINE = /\(HAP v[^)]*\).* is running on port (\d+)/;

/** The bridge's Matter port, inside the private network each Matter run has to itself. */
const MATTER_PORT = 5540;

/** Homebridge logs it at every start with Matter on: `1234-567-8901`. */
const PAIRING_CODE_LINE = /Manual Pairing Code: (\d{4}-\d{3}-\d{4})/;

export const START_TIMEOUT_MS = 30_000;

/** How long a Homebridge gets to exit on SIGTERM: it forces its own exit after 5 s. */
export const STOP_TIMEOUT_MS = 12_000;

/** Where a write outside the storage would land: HOME, working folder, TMPDIR, empty plugin folder. */
const OUTSIDE_STORAGE = ['home', 'cwd', 'tmp', 'no-plugins'] as const;

/** The storage of a sandbox with Matter on, in its home folder: Homebridge's own default place. */
const STORAGE_UNDER_HOME = '.homebridge';

export interface SandboxOptions {
  /**
   * Publishes the bridge over Matter too. Homebridge 2.1.0 starts Matter only when the storage lies
   * under `~/.homebridge` (or the working folder, or /var/lib/homebridge): the storage is then
   * `<home>/.homebridge`. Such a Homebridge runs only in a private network (startWithMatter).
   */
  matter?: boolean;
}

export class HomebridgeSandbox {
  private readonly started: HomebridgeProcess[] = [];
  private released: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly root: string,
    readonly bridge: BridgeSettings,
    readonly storagePath: string,
  ) {}

  static async create({ matter = false }: SandboxOptions = {}): Promise<HomebridgeSandbox> {
    const root = await mkdtemp(join(tmpdir(), 'homebridge-e2e-'));
    await Promise.all(OUTSIDE_STORAGE.map((folder) => mkdir(join(root, folder))));
    const storagePath = matter ? join(root, 'home', STORAGE_UNDER_HOME) : join(root, 'storage');
    await mkdir(storagePath);
    const bridge: BridgeSettings = { name: 'E2E Bridge', username: newBridgeIdentity().username, port: await freeLoopbackPort(), pin: '031-45-154' };
    if (matter) {
      // Inside the private network, `lo` is the one interface: for HAP's mDNS and Matter's alike.
      Object.assign(bridge, { matter: { port: MATTER_PORT }, bind: ['lo'] });
    }
    return new HomebridgeSandbox(root, bridge, storagePath);
  }

  /** An empty plugin folder: with --strict-plugin-resolution Homebridge finds no plugin at all. */
  get noPluginsPath(): string {
    return join(this.root, 'no-plugins');
  }

  writeConfig(platforms: HomebridgeConfig['platforms'] = []): Promise<void> {
    return writeHomebridgeConfig(this.storagePath, { bridge: this.bridge, platforms });
  }

  /**
   * Starts Homebridge on the sandbox's storage and resolves once its bridge is published; under
   * `nodeBinary` when given (an older Node.js), else under the Node.js running the tests.
   */
  async start(runtime: HomebridgeRuntime, pluginPath = this.noPluginsPath, nodeBinary?: string): Promise<HomebridgeProcess> {
    const homebridge = startHomebridge({ ...(await this.launch(runtime, pluginPath)), ...(nodeBinary === undefined ? {} : { nodeBinary }) });
    this.started.push(homebridge);
    await homebridge.waitForLine(RUNNING_LINE, START_TIMEOUT_MS);
    return homebridge;
  }

  /**
   * Starts Homebridge in a private network (see matter/private-network.ts) with a Matter controller
   * beside it, and resolves once the controller has read the bridge. HAP's and the push receiver's
   * ports are carried out of the network, those of `serverUrls` into it. The first run commissions the
   * bridge with the pairing code Homebridge logs at every start; later runs find the fabric in the
   * controller's storage and reconnect, as a phone does after the bridge restarts.
   */
  async startWithMatter(
    runtime: MatterRuntime,
    pluginPath: string,
    { pushPort, serverUrls }: { pushPort: number; serverUrls: ReadonlyArray<string | undefined> },
  ): Promise<{ homebridge: HomebridgeProcess; matter: MatterTestClient }> {
    // The previous run's tunnels hold the same ports out here until they are closed.
    await this.released;
    const { homebridge, host, released } = await startInPrivateNetwork({
      ...(await this.launch(runtime, pluginPath)),
      inboundPorts: [this.bridge.port, pushPort],
      outboundUrls: serverUrls,
      socketFolder: join(this.root, 'net'),
      // The namespace keeps every server on its loopback; the guard's moves would only add noise.
      loopbackOnly: false,
      debug: 'without-matter',
    });
    this.started.push(homebridge);
    this.released = released;
    await homebridge.waitForLine(RUNNING_LINE, START_TIMEOUT_MS);
    const [, pairingCode] = await homebridge.waitForLine(PAIRING_CODE_LINE, START_TIMEOUT_MS);
    const settings = { matterRoot: await runtime.matterRoot(), storagePath: join(this.root, 'matter-controller'), bridgePort: MATTER_PORT, pairingCode };
    return { homebridge, matter: await MatterTestClient.connect(host, settings) };
  }

  private async launch(runtime: HomebridgeRuntime, pluginPath: string): Promise<HomebridgeLaunch> {
    return {
      homebridgeBin: await runtime.binary(),
      // npm test runs jest under Node 22 or later already (scripts/run-tests.mjs).
      nodeBinary: process.execPath,
      storagePath: this.storagePath,
      pluginPath,
      cwd: join(this.root, 'cwd'),
      env: { HOME: join(this.root, 'home'), TMPDIR: join(this.root, 'tmp') },
    };
  }

  /** Every output line of every Homebridge this sandbox started, run after run. */
  get outputLines(): string[] {
    return this.started.flatMap((homebridge) => homebridge.lines);
  }

  /** Whatever appeared in the home, working, temp or empty plugin folder: written outside storage. */
  async writesOutsideStorage(): Promise<string[]> {
    const snapshots = await Promise.all(OUTSIDE_STORAGE.map((folder) => snapshotFiles(join(this.root, folder), [STORAGE_UNDER_HOME])));
    return snapshots.flatMap((snapshot) => [...snapshot.keys()]);
  }

  async dispose(): Promise<void> {
    await Promise.all(this.started.map((homebridge) => homebridge.stop(STOP_TIMEOUT_MS)));
    await this.released;
    await rm(this.root, { recursive: true, force: true });
  }
}
