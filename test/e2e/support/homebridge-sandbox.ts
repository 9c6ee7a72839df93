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
  type HomebridgeProcess,
} from '../../../scripts/lib/homebridge-process.js';
import { snapshotFiles } from './file-snapshot.js';
import type { HomebridgeRuntime } from './homebridge-versions.js';

/** Printed by Homebridge 1 and 2 alike once the bridge is published. */
export const RUNNING_LINE = /is running on port (\d+)/;

export const START_TIMEOUT_MS = 30_000;

/** How long a Homebridge gets to exit on SIGTERM: it forces its own exit after 5 s. */
export const STOP_TIMEOUT_MS = 12_000;

/** Where a write outside the storage would land: HOME, working folder, TMPDIR, empty plugin folder. */
const OUTSIDE_STORAGE = ['home', 'cwd', 'tmp', 'no-plugins'] as const;

export class HomebridgeSandbox {
  private readonly started: HomebridgeProcess[] = [];

  private constructor(
    readonly root: string,
    readonly bridge: BridgeSettings,
  ) {}

  static async create(): Promise<HomebridgeSandbox> {
    const root = await mkdtemp(join(tmpdir(), 'homebridge-e2e-'));
    await Promise.all(['storage', ...OUTSIDE_STORAGE].map((folder) => mkdir(join(root, folder))));
    const bridge = { name: 'E2E Bridge', username: newBridgeIdentity().username, port: await freeLoopbackPort(), pin: '031-45-154' };
    return new HomebridgeSandbox(root, bridge);
  }

  get storagePath(): string {
    return join(this.root, 'storage');
  }

  /** An empty plugin folder: with --strict-plugin-resolution Homebridge finds no plugin at all. */
  get noPluginsPath(): string {
    return join(this.root, 'no-plugins');
  }

  writeConfig(platforms: HomebridgeConfig['platforms'] = []): Promise<void> {
    return writeHomebridgeConfig(this.storagePath, { bridge: this.bridge, platforms });
  }

  /** Starts Homebridge on the sandbox's storage and resolves once its bridge is published. */
  async start(runtime: HomebridgeRuntime, pluginPath = this.noPluginsPath): Promise<HomebridgeProcess> {
    const homebridge = startHomebridge({
      homebridgeBin: await runtime.binary(),
      // npm test runs jest under Node 22 or later already (scripts/run-tests.mjs).
      nodeBinary: process.execPath,
      storagePath: this.storagePath,
      pluginPath,
      cwd: join(this.root, 'cwd'),
      env: { HOME: join(this.root, 'home'), TMPDIR: join(this.root, 'tmp') },
    });
    this.started.push(homebridge);
    await homebridge.waitForLine(RUNNING_LINE, START_TIMEOUT_MS);
    return homebridge;
  }

  /** Every output line of every Homebridge this sandbox started, run after run. */
  get outputLines(): string[] {
    return this.started.flatMap((homebridge) => homebridge.lines);
  }

  /** Whatever appeared in the home, working, temp or empty plugin folder: written outside storage. */
  async writesOutsideStorage(): Promise<string[]> {
    const snapshots = await Promise.all(OUTSIDE_STORAGE.map((folder) => snapshotFiles(join(this.root, folder))));
    return snapshots.flatMap((snapshot) => [...snapshot.keys()]);
  }

  async dispose(): Promise<void> {
    await Promise.all(this.started.map((homebridge) => homebridge.stop(STOP_TIMEOUT_MS)));
    await rm(this.root, { recursive: true, force: true });
  }
}
