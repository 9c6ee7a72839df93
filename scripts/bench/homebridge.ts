/**
 * A real Homebridge 2 child process for the benchmark, with the built plugin against the simulator or
 * with no plugin at all, its storage in a temporary folder. The memory probe is preloaded into it, so
 * its memory can be read after a garbage collection at a moment the benchmark chooses.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Simulator } from '../../simulator/index.js';
import { RUNNING_LINE, START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../lib/homebridge-sandbox.js';
import {
  freeLoopbackPort,
  newBridgeIdentity,
  startHomebridge,
  writeHomebridgeConfig,
  type BridgeSettings,
  type HomebridgeProcess,
} from '../lib/homebridge-process.js';
import { HOMEBRIDGE_2_BIN, REPO_ROOT } from '../lib/paths.js';
import { platformConfig } from '../lib/platform-harness.js';
import { doorbellEntries } from './settings.js';
import { signInAsTheSettingsPage } from './settings-page.js';

const MEMORY_PROBE_URL = new URL('./memory-probe.mjs', import.meta.url).href;
const MEMORY_LINE = /^\[memory-probe\] (\{.*\})$/;

/** The probe's default time limit for the heap to settle. */
const DEFAULT_SETTLE_MAX_MS = 30_000;

/** Beyond the probe's own limit: its last collections, and a slow machine. */
const PROBE_SLACK_MS = 10_000;

/** What the memory probe reports once the heap has settled (see memory-probe.mjs). */
export interface MemoryReading {
  heapUsed: number;
  /** Memory of C++ objects bound to JavaScript ones (buffers among them): the plugin's too. */
  external: number;
  /** False when the heap was still changing at the probe's time limit: read as it was then. */
  settled: boolean;
  settleMs: number;
  /** Resident memory as V8 held it once settled, its young generation as start-up left it. */
  rssHeld: number;
  /** Resident memory after a memory-reducing collection gave back what V8 held spare. */
  rss: number;
  /** False when gc() was not available in Homebridge: the reading is then not after a collection. */
  collected: boolean;
}

/** The plugin's cloud and doorbells; no plugin at all without it. */
export interface BenchPlugin {
  sim: Simulator;
  doorbells: readonly string[];
  /** Relay mode through the relay at this URL; direct mode on a free loopback port without it. */
  relayUrl?: string;
  /**
   * Signed in on the settings page before Homebridge starts, as the default set-up is, rather than with
   * account.code at the plugin's first start.
   */
  settingsPageSignIn?: boolean;
  /** Every control in the Home app on every doorbell (the default here), or default doorbells. */
  everyControl?: boolean;
}

export class BenchHomebridge {
  /** Every one not yet disposed of, so an interrupted benchmark still stops them all by their pids. */
  private static readonly live = new Set<BenchHomebridge>();

  static async disposeAll(): Promise<void> {
    await Promise.all([...BenchHomebridge.live].map((homebridge) => homebridge.dispose()));
  }

  private constructor(
    private readonly root: string,
    readonly bridge: BridgeSettings,
    /** The push receiver's port in direct mode. */
    readonly pushPort: number,
    private readonly withPlugin: boolean,
    private readonly settleMaxMs: number,
  ) {}

  private running: HomebridgeProcess | undefined;

  /**
   * A new storage whose config.json holds the plugin's block, or no platform without a plugin.
   * `settleMaxMs`: how long the memory probe may wait for the heap to settle.
   */
  static async create(plugin: BenchPlugin | undefined, settleMaxMs = DEFAULT_SETTLE_MAX_MS): Promise<BenchHomebridge> {
    const root = await mkdtemp(join(tmpdir(), 'doorbell-motion-bench-'));
    await mkdir(join(root, 'no-plugins'));
    const bridge = { name: 'Bench Bridge', ...newBridgeIdentity(), port: await freeLoopbackPort() };
    const homebridge = new BenchHomebridge(root, bridge, await freeLoopbackPort(), plugin !== undefined, settleMaxMs);
    BenchHomebridge.live.add(homebridge);
    const block = plugin === undefined ? undefined : homebridge.platformBlock(plugin);
    await writeHomebridgeConfig(homebridge.storagePath, { bridge, platforms: block === undefined ? [] : [block] });
    if (block !== undefined && plugin?.settingsPageSignIn === true) {
      await signInAsTheSettingsPage(homebridge.storagePath, block);
    }
    return homebridge;
  }

  get storagePath(): string {
    return join(this.root, 'storage');
  }

  get process(): HomebridgeProcess {
    if (this.running === undefined) {
      throw new Error('this Homebridge has not been started');
    }
    return this.running;
  }

  /**
   * Starts it (the plugin from this repository's dist/, or none) and resolves once the bridge is
   * published. Started again, it keeps the storage: a restart.
   */
  async start(): Promise<HomebridgeProcess> {
    const running = startHomebridge({
      homebridgeBin: HOMEBRIDGE_2_BIN,
      // bench.ts runs under Node 22 or later, which Homebridge 2 needs too.
      nodeBinary: process.execPath,
      storagePath: this.storagePath,
      pluginPath: this.withPlugin ? REPO_ROOT : join(this.root, 'no-plugins'),
      env: { NODE_OPTIONS: `--expose-gc --import ${MEMORY_PROBE_URL}`, MEMORY_PROBE_SETTLE_MAX_MS: String(this.settleMaxMs) },
    });
    this.running = running;
    await running.waitForLine(RUNNING_LINE, START_TIMEOUT_MS);
    return running;
  }

  /** Its memory once the heap has settled, as the probe reports it. */
  async memory(): Promise<MemoryReading> {
    const running = this.process;
    const from = running.lines.length;
    process.kill(running.pid, 'SIGUSR2');
    const [, json] = await running.waitForLine(MEMORY_LINE, this.settleMaxMs + PROBE_SLACK_MS, from);
    return JSON.parse(json) as MemoryReading;
  }

  async stop(): Promise<void> {
    await this.running?.stop(STOP_TIMEOUT_MS);
  }

  async dispose(): Promise<void> {
    BenchHomebridge.live.delete(this);
    await this.stop();
    await rm(this.root, { recursive: true, force: true });
  }

  /** The harness's block, as the in-process runs use it: relay mode, or direct mode on this Homebridge's push port. */
  private platformBlock({ sim, doorbells, relayUrl, settingsPageSignIn = false, everyControl = true }: BenchPlugin): Record<string, unknown> {
    const block = platformConfig(sim, relayUrl ?? this.pushPort, { doorbells: doorbellEntries(doorbells, everyControl) });
    if (settingsPageSignIn) {
      // The page stores the account's fields in config.json, never the code.
      const account = { ...(block.account as Record<string, unknown>) };
      delete account.code;
      return { ...block, account };
    }
    return block;
  }
}
