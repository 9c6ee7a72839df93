/**
 * The plugin installed in one Homebridge storage, against the simulator: a HomebridgeSandbox that
 * runs the built plugin, the simulator in this jest process, the push receiver's port, and a HomeKit
 * controller. Runs on the same setup share storage, ports and pairing, as restarts of one Homebridge do.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { freeLoopbackPort, type HomebridgeProcess, type StopResult } from '../../../scripts/lib/homebridge-process.js';
import { startSimulator, type Simulator } from '../../../simulator/index.js';
import { startRelay } from '../../../simulator/relay/index.js';
import type { Relay } from '../../../simulator/relay/index.js';
import { linesRevealing } from '../../support/log-secrets.js';
import { pollUntil } from '../../../scripts/lib/poll.js';
import { findBySerialNumber, HapCharacteristic, HapService, HapTestClient, type CharacteristicRef } from '../../../scripts/lib/hap-client.js';
import { HomebridgeSandbox, RUNNING_LINE, STOP_TIMEOUT_MS } from '../../../scripts/lib/homebridge-sandbox.js';
import { asMatterRuntime, RUNTIME_SETUP_TIMEOUT_MS, type HomebridgeRuntime, type MatterRuntime } from '../../../scripts/lib/homebridge-versions.js';
import { REPO_ROOT } from '../../../scripts/lib/paths.js';
import { doorbellMotionPlatform, SERIAL_NUMBERS, SIMULATOR_OPTIONS, type PluginEndpoints } from './plugin-config.js';
import type { MatterTestClient } from '../../../scripts/lib/matter/matter-client.js';

/**
 * How long a scenario watches a running Homebridge for a crash, a restart or requests that should not
 * come: the plugin's first retries fall within it (1 to 2 s, then 2 to 4 s after that).
 */
export const WATCH_MS = 3_000;

/** HAP's StatusFault values. */
export const NO_FAULT = 0;
export const GENERAL_FAULT = 1;

/** One doorbell's MotionSensor as the controller sees it. */
export interface DoorbellSensor {
  aid: number;
  name: unknown;
  serialNumber: string;
  motionDetected: CharacteristicRef;
  statusFault: CharacteristicRef;
}

export interface PluginSetupOptions {
  /** How notifications reach the plugin: its own receiver, or the loopback relay. */
  delivery?: 'direct' | 'relay';
  /**
   * Publishes the bridge over Matter too: Homebridge runs in a private network beside a Matter
   * controller (see scripts/lib/matter/private-network.ts), which each start connects, commissioning it first.
   */
  matter?: boolean;
}

export class PluginSetup {
  private pairedController: HapTestClient | undefined;
  private running: HomebridgeProcess | undefined;
  private matterClient: MatterTestClient | undefined;

  private constructor(
    private readonly runtime: HomebridgeRuntime,
    readonly sandbox: HomebridgeSandbox,
    readonly simulator: Simulator,
    readonly endpoints: PluginEndpoints,
    /** The loopback push relay, in relay mode. */
    readonly relay: Relay | undefined,
    /** With Matter on: the runtime as one that publishes over Matter. */
    private readonly matterRuntime: MatterRuntime | undefined,
  ) {}

  /**
   * A fresh storage whose config.json holds the full platform block for the simulator: direct mode,
   * or relay mode through a loopback relay of the setup's own.
   */
  static async create(runtime: HomebridgeRuntime, { delivery = 'direct', matter = false }: PluginSetupOptions = {}): Promise<PluginSetup> {
    const sandbox = await HomebridgeSandbox.create({ matter });
    const simulator = await startSimulator(SIMULATOR_OPTIONS);
    const relay = delivery === 'relay' ? await startRelay() : undefined;
    const endpoints = {
      accountUrl: simulator.accountUrl,
      doorbellUrl: simulator.doorbellUrl,
      pushPort: await freeLoopbackPort(),
      ...(relay === undefined ? {} : { relayUrl: relay.url }),
    };
    const setup = new PluginSetup(runtime, sandbox, simulator, endpoints, relay, matter ? asMatterRuntime(runtime) : undefined);
    await sandbox.writeConfig([doorbellMotionPlatform(endpoints)]);
    return setup;
  }

  /** The Homebridge started last; throws before the first start. */
  get homebridge(): HomebridgeProcess {
    if (this.running === undefined) {
      throw new Error('Homebridge has not been started on this setup');
    }
    return this.running;
  }

  /**
   * Starts Homebridge with the built plugin; resolves once the bridge is published, and with Matter on
   * once the Matter controller has read the bridge. `nodeBinary`: another Node.js to run it (without Matter).
   */
  async start(nodeBinary?: string): Promise<HomebridgeProcess> {
    if (this.matterRuntime === undefined) {
      this.running = await this.sandbox.start(this.runtime, REPO_ROOT, nodeBinary);
      return this.running;
    }
    const { accountUrl, doorbellUrl, relayUrl, pushPort } = this.endpoints;
    // The region call answers with the simulator's regional address, where the login goes.
    const serverUrls = [accountUrl, this.simulator.regionUrl, doorbellUrl, relayUrl];
    const run = await this.sandbox.startWithMatter(this.matterRuntime, REPO_ROOT, { pushPort, serverUrls });
    this.matterClient = run.matter;
    this.running = run.homebridge;
    return this.running;
  }

  get hasMatter(): boolean {
    return this.matterRuntime !== undefined;
  }

  /** The Matter controller of the latest start; throws without Matter or before a start. */
  get matter(): MatterTestClient {
    if (this.matterClient === undefined) {
      throw new Error('No Matter controller: the setup has Matter off, or has not been started');
    }
    return this.matterClient;
  }

  /** Paired with the setup PIN on first use; later runs verify that same pairing, as the Home app does. */
  async controller(): Promise<HapTestClient> {
    this.pairedController ??= await HapTestClient.pair(this.sandbox.bridge, this.sandbox.bridge.pin);
    return this.pairedController;
  }

  /** Every configured doorbell's sensor, in configuration order; throws when one is not published. */
  async sensors(): Promise<DoorbellSensor[]> {
    const accessories = await (await this.controller()).accessories();
    return SERIAL_NUMBERS.map((serialNumber) => {
      const accessory = findBySerialNumber(accessories, serialNumber);
      return {
        aid: accessory.aid,
        name: accessory.name,
        serialNumber,
        motionDetected: accessory.characteristic(HapService.MotionSensor, HapCharacteristic.MotionDetected),
        statusFault: accessory.characteristic(HapService.MotionSensor, HapCharacteristic.StatusFault),
      };
    });
  }

  /** Each sensor's StatusFault, read now, in configuration order; `sensors` spares looking them up again. */
  async statusFaults(sensors?: readonly DoorbellSensor[]): Promise<unknown[]> {
    const faultsOf = sensors ?? (await this.sensors());
    return (await this.controller()).read(...faultsOf.map(({ statusFault }) => statusFault));
  }

  /** Waits, bounded, until every sensor (or each of `only`) shows `expected`: the plugin works in the background. */
  async waitForStatusFaults(expected: number, timeoutMs: number, only?: readonly DoorbellSensor[]): Promise<void> {
    const sensors = only ?? (await this.sensors());
    await pollUntil(
      () => this.statusFaults(sensors),
      (faults) => faults.every((fault) => fault === expected),
      timeoutMs,
      `StatusFault ${expected} on ${only === undefined ? 'every doorbell' : only.map(({ name }) => String(name)).join(', ')}`,
    );
  }

  /**
   * Starts Homebridge, runs `check` on it, and stops it even when the check fails, since the next run
   * needs its ports. Resolves with how the stop went; rejects with the check's failure.
   */
  async runOnce(check: (homebridge: HomebridgeProcess) => Promise<void>, nodeBinary?: string): Promise<StopResult> {
    const failure = await check(await this.start(nodeBinary)).then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    const stopped = await this.stop();
    if (failure !== undefined) {
      throw failure.error;
    }
    return stopped;
  }

  /** SIGTERM, after closing the controller's connections so that it verifies again on the next run. */
  async stop(): Promise<StopResult> {
    await this.pairedController?.close();
    return this.homebridge.stop(STOP_TIMEOUT_MS);
  }

  /**
   * Output lines of every run so far that hold a secret the simulator handed out or was given (the
   * code, a token, an rriot key, the push token's secret part), or one of `moreSecrets`.
   */
  linesRevealingSecrets(moreSecrets: readonly string[] = []): string[] {
    return linesRevealing(this.sandbox.outputLines, [...this.simulator.secrets, ...moreSecrets]);
  }

  async dispose(): Promise<void> {
    await this.pairedController?.close();
    await this.sandbox.dispose();
    await this.relay?.close();
    await this.simulator.close();
  }
}

/**
 * A setup for the enclosing describe: created before its tests, with `prepare` run on it (faults to
 * inject, say; awaited when it returns a promise) before any test starts Homebridge, and disposed after them.
 */
export function usePluginSetup(
  runtime: HomebridgeRuntime,
  prepare: (setup: PluginSetup) => unknown = () => undefined,
  options?: PluginSetupOptions,
): () => PluginSetup {
  let setup: PluginSetup | undefined;
  beforeAll(async () => {
    await runtime.binary();
    setup = await PluginSetup.create(runtime, options);
    await prepare(setup);
  }, RUNTIME_SETUP_TIMEOUT_MS);
  afterAll(() => setup?.dispose(), STOP_TIMEOUT_MS * 2);
  return () => {
    if (setup === undefined) {
      throw new Error('The setup is created in beforeAll; use it inside tests');
    }
    return setup;
  };
}

/** Still up, and never restarted: a crash under a service manager would print a second running line. */
export function expectRunningOnce(homebridge: HomebridgeProcess): void {
  expect(homebridge.running).toBe(true);
  expect(homebridge.lines.filter((line) => RUNNING_LINE.test(line))).toHaveLength(1);
}

/** Homebridge says EADDRINUSE for its HAP port, the plugin "already in use" for its receiver's. */
export function expectNoPortInUse(homebridge: HomebridgeProcess): void {
  expect(homebridge.lines.filter((line) => /EADDRINUSE|already in use/i.test(line))).toEqual([]);
}

/** Homebridge left on its own after SIGTERM, well within the time a service manager allows. */
export function expectStoppedInTime(stopped: StopResult): void {
  expect(stopped.killed).toBe(false);
  expect(stopped.exitedAfterMs).toBeLessThan(STOP_TIMEOUT_MS);
}

/**
 * The checks every scenario ends with, as the last tests of its describe: the latest run stops in
 * time, and no run of the setup left a trace it should not have.
 */
export function itEndsCleanly(setup: () => PluginSetup): void {
  it(
    'exits within 12 s of SIGTERM',
    async () => expectStoppedInTime(await setup().stop()),
    STOP_TIMEOUT_MS * 2,
  );
  itLeavesNoTrace(setup);
}

/** What Homebridge prints for a defect even when everything else works: HAP's warnings, an unhandled rejection, a stack frame. */
const DEFECT_LINE = /HAP-NodeJS WARNING|generated a warning|unhandled ?(promise ?)?rejection|^\s*at \S.*:\d+:\d+\)?$/i;

/** `moreSecrets`: those the scenario put in config.json beyond the standard block's code. */
export function itLeavesNoTrace(setup: () => PluginSetup, moreSecrets: readonly string[] = []): void {
  it('sent only valid requests, logged no secret, HAP warning, unhandled rejection or stack trace in any line of any run (at debug level), wrote nothing outside its storage', async () => {
    expect(setup().simulator.invalidRequests()).toEqual([]);
    expect(setup().linesRevealingSecrets(moreSecrets)).toEqual([]);
    expect(setup().sandbox.outputLines.filter((line) => DEFECT_LINE.test(line))).toEqual([]);
    expect(await setup().sandbox.writesOutsideStorage()).toEqual([]);
    // Without Matter on the bridge (and on Homebridge 1), nothing about Matter, at any level.
    expect(setup().hasMatter ? [] : setup().sandbox.outputLines.filter((line) => /matter/i.test(line))).toEqual([]);
  });
}
