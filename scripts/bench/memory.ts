/**
 * What the plugin adds to a Homebridge's memory. Real Homebridge 2 children, one at a time: a bare one,
 * one with the plugin and 1 doorbell, one with 100, each in the default set-up (relay mode, default
 * doorbells, signed in to the simulator on the settings page), the 100 again with a battery each in
 * the doorbell list, one with 100 carrying every control, and the five again, in alternation, for
 * every run. Each is read once its heap has settled (memory-probe.mjs); a run's overhead is the
 * plugin's reading less the bare Homebridge's of the same run, so a run that found the machine busier
 * counts against both. What the batteries add is likewise taken run by run against the 100 without.
 */
import type { Simulator } from '../../simulator/index.js';
import { startRelay } from '../../simulator/relay/index.js';
import type { Relay } from '../../simulator/relay/index.js';
import { ACCOUNT } from '../lib/platform-harness.js';
import { BenchHomebridge, type MemoryReading } from './homebridge.js';
import { startBenchCloud } from './in-process.js';
import { MIB } from './latency.js';
import { doorbellIds, type BenchSettings } from './settings.js';

/** Signing in and subscribing 100 doorbells against the 100 ms cloud takes seconds. */
const SUBSCRIBED_TIMEOUT_MS = 30_000;

/** The list read follows the subscriptions: one request, 100 ms late. */
const LIST_READ_TIMEOUT_MS = 10_000;

/**
 * The plugin's debug line for the doorbell list's answer. What the list says is applied in the same turn
 * of the event loop, before the probe's signal can be handled: once the line is out, every battery is shown.
 */
const LIST_READ_LINE = /GET \/clients_api\/ring_devices 200 /;

/** The level every doorbell's battery reads in the battery set-up: a common one, not low, so no warning. */
const BATTERY_LEVEL = 87;

/** Smallest, middle and largest of the runs. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export interface MemoryFigure {
  doorbells: number;
  /** Heap used + external, the median of the runs' overheads: the plugin's own objects. */
  heapOverheadMb: number;
  /** How far apart the runs' heap overheads were. */
  heapOverheadSpreadMb: number;
  /** Resident memory once V8 has given back what it held spare. */
  rssOverheadMb: Spread;
  /** Resident memory as V8 held it, its young generation as start-up left it (16 or 32 MiB). */
  rssHeldOverheadMb: Spread;
}

/** What one set-up adds to another, taken run by run (each run's readings of the two, one after the other). */
export interface AddedFigure {
  /** Heap + external, the median of the runs' differences. */
  heapMb: number;
  /** How far apart the runs' differences were. */
  heapSpreadMb: number;
  /** Resident memory, after V8 gave back what it held spare. */
  rssMb: Spread;
}

export interface MemoryPhase {
  runs: number;
  /** The bare Homebridge itself, which the overheads are taken from. */
  homebridge: { heapMb: number; rssMb: Spread };
  /** The default set-up: default doorbells, relay mode, signed in on the settings page. */
  n1: MemoryFigure;
  n100: MemoryFigure;
  /** The same 100 doorbells, each with `battery_life` in the doorbell list, so each has a Battery service. */
  batteries: MemoryFigure;
  /** What the batteries add to the 100 doorbells without them. */
  batteriesAdded: AddedFigure;
  /** The same, with every control in the Home app on every doorbell (both switches, three detection sensors); not in a quick run. */
  everyControl?: MemoryFigure;
  /** False when some heap was still changing at the probe's time limit. */
  settled: boolean;
  collected: boolean;
}

interface MemoryCloud {
  sim: Simulator;
  relay: Relay;
  doorbells: readonly string[];
}

type SetUpName = 'bare' | 'n1' | 'n100' | 'batteries' | 'everyControl';

/** What each run starts, one after the other: no plugin, then the plugin with so many doorbells. */
interface SetUp {
  doorbells: number;
  everyControl: boolean;
  /** Each doorbell's list entry carries a battery level. */
  batteries: boolean;
}

export async function memoryPhase(settings: BenchSettings): Promise<MemoryPhase> {
  const doorbells = doorbellIds(settings.doorbells);
  const all = doorbells.length;
  const setUps: Record<SetUpName, SetUp | undefined> = {
    bare: { doorbells: 0, everyControl: false, batteries: false },
    n1: { doorbells: 1, everyControl: false, batteries: false },
    n100: { doorbells: all, everyControl: false, batteries: false },
    // Right after the 100 without, so that each run's two readings are taken close together.
    batteries: { doorbells: all, everyControl: false, batteries: true },
    everyControl: settings.quick ? undefined : { doorbells: all, everyControl: true, batteries: false },
  };
  const sim = await startBenchCloud(doorbells);
  // A cloud of its own, whose list gives every doorbell a battery: the other set-ups' list stays as a user's wired doorbells give it.
  const batterySim = await startBenchCloud(doorbells);
  doorbells.forEach((deviceId) => batterySim.setDoorbellHealth(deviceId, { battery_life: BATTERY_LEVEL }));
  const relay = await startRelay();
  const readings: Record<SetUpName, MemoryReading[]> = { bare: [], n1: [], n100: [], batteries: [], everyControl: [] };
  try {
    for (let run = 0; run < settings.memoryRuns; run += 1) {
      for (const [name, setUp] of Object.entries(setUps) as Array<[SetUpName, SetUp | undefined]>) {
        if (setUp !== undefined) {
          const cloud = { sim: setUp.batteries ? batterySim : sim, relay, doorbells };
          readings[name].push(await readHomebridge(cloud, setUp, settings.settleMaxMs));
        }
      }
    }
  } finally {
    await relay.close();
    await batterySim.close();
    await sim.close();
  }
  const { bare } = readings;
  const every = Object.values(readings).flat();
  return {
    runs: settings.memoryRuns,
    homebridge: { heapMb: round(median(bare.map(heapOf)), 2), rssMb: spread(bare.map(({ rss }) => rss)) },
    n1: figure(bare, readings.n1, 1),
    n100: figure(bare, readings.n100, all),
    batteries: figure(bare, readings.batteries, all),
    batteriesAdded: added(readings.n100, readings.batteries),
    everyControl: setUps.everyControl === undefined ? undefined : figure(bare, readings.everyControl, all),
    settled: every.every(({ settled }) => settled),
    collected: every.every(({ collected }) => collected),
  };
}

/** A fresh Homebridge with the plugin and so many doorbells (none: no plugin), read once settled. */
async function readHomebridge({ sim, relay, doorbells }: MemoryCloud, setUp: SetUp, settleMaxMs: number): Promise<MemoryReading> {
  const count = setUp.doorbells;
  const plugin = count === 0 ? undefined : { sim, doorbells: doorbells.slice(0, count), relayUrl: relay.url, settingsPageSignIn: true, everyControl: setUp.everyControl };
  if (plugin !== undefined) {
    // A fresh storage signs in: the simulator gets a fresh, unspent code first.
    sim.addAccount({ ...ACCOUNT });
  }
  const homebridge = await BenchHomebridge.create(plugin, settleMaxMs);
  try {
    const running = await homebridge.start();
    if (plugin !== undefined) {
      await running.waitForLine(new RegExp(`${count} of ${count} doorbells subscribed`), SUBSCRIBED_TIMEOUT_MS);
      // Read once the launch's doorbell list read, which follows the subscriptions, is over too: a running plugin holds what it found.
      await running.waitForLine(LIST_READ_LINE, LIST_READ_TIMEOUT_MS);
    }
    return await homebridge.memory();
  } finally {
    await homebridge.dispose();
  }
}

function figure(bare: readonly MemoryReading[], withPlugin: readonly MemoryReading[], doorbells: number): MemoryFigure {
  const overhead = (value: (reading: MemoryReading) => number): number[] =>
    withPlugin.map((reading, run) => value(reading) - value(bare[run] as MemoryReading));
  const heap = overhead(heapOf);
  return {
    doorbells,
    heapOverheadMb: round(median(heap), 2),
    heapOverheadSpreadMb: round(Math.max(...heap) - Math.min(...heap), 2),
    rssOverheadMb: spread(overhead(({ rss }) => rss)),
    rssHeldOverheadMb: spread(overhead(({ rssHeld }) => rssHeld)),
  };
}

function added(without: readonly MemoryReading[], withIt: readonly MemoryReading[]): AddedFigure {
  const difference = (value: (reading: MemoryReading) => number): number[] =>
    withIt.map((reading, run) => value(reading) - value(without[run] as MemoryReading));
  const heap = difference(heapOf);
  return {
    heapMb: round(median(heap), 2),
    heapSpreadMb: round(Math.max(...heap) - Math.min(...heap), 2),
    rssMb: spread(difference(({ rss }) => rss)),
  };
}

function heapOf({ heapUsed, external }: MemoryReading): number {
  return heapUsed + external;
}

function spread(bytes: readonly number[]): Spread {
  return { min: round(Math.min(...bytes), 1), median: round(median(bytes), 1), max: round(Math.max(...bytes), 1) };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Bytes in MiB, to `digits` decimals. */
function round(bytes: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round((bytes / MIB) * scale) / scale;
}
