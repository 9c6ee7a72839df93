/**
 * What the plugin adds to a Homebridge's memory. Real Homebridge 2 children, one at a time: a bare one,
 * one with the plugin and 1 doorbell, one with 100, each in the default set-up (relay mode, default
 * doorbells, signed in to the simulator on the settings page), one with 100 carrying every control,
 * and the four again, in alternation, for every run. Each is read once its heap has settled
 * (memory-probe.mjs); a run's overhead is the plugin's reading less the bare Homebridge's of the same
 * run, so a run that found the machine busier counts against both.
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

export interface MemoryPhase {
  runs: number;
  /** The bare Homebridge itself, which the overheads are taken from. */
  homebridge: { heapMb: number; rssMb: Spread };
  /** The default set-up: default doorbells, relay mode, signed in on the settings page. */
  n1: MemoryFigure;
  n100: MemoryFigure;
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

type SetUpName = 'bare' | 'n1' | 'n100' | 'everyControl';

/** What each run starts, one after the other: no plugin, then the plugin with so many doorbells. */
interface SetUp {
  doorbells: number;
  everyControl: boolean;
}

export async function memoryPhase(settings: BenchSettings): Promise<MemoryPhase> {
  const doorbells = doorbellIds(settings.doorbells);
  const all = doorbells.length;
  const setUps: Record<SetUpName, SetUp | undefined> = {
    bare: { doorbells: 0, everyControl: false },
    n1: { doorbells: 1, everyControl: false },
    n100: { doorbells: all, everyControl: false },
    everyControl: settings.quick ? undefined : { doorbells: all, everyControl: true },
  };
  const sim = await startBenchCloud(doorbells);
  const relay = await startRelay();
  const readings: Record<SetUpName, MemoryReading[]> = { bare: [], n1: [], n100: [], everyControl: [] };
  try {
    for (let run = 0; run < settings.memoryRuns; run += 1) {
      for (const [name, setUp] of Object.entries(setUps) as Array<[SetUpName, SetUp | undefined]>) {
        if (setUp !== undefined) {
          readings[name].push(await readHomebridge({ sim, relay, doorbells }, setUp, settings.settleMaxMs));
        }
      }
    }
  } finally {
    await relay.close();
    await sim.close();
  }
  const { bare } = readings;
  const every = Object.values(readings).flat();
  return {
    runs: settings.memoryRuns,
    homebridge: { heapMb: round(median(bare.map(heapOf)), 2), rssMb: spread(bare.map(({ rss }) => rss)) },
    n1: figure(bare, readings.n1, 1),
    n100: figure(bare, readings.n100, all),
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
