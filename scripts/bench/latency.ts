/**
 * Timing notifications one at a time, from the POST leaving the sender to the moment the change is
 * seen, whichever way it is seen (a characteristic's change event in this process, a HAP event at a
 * paired controller). One at a time, so no sample waits for another's turn: each is the path's
 * latency, not a queue's.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Simulator } from '../../simulator/index.js';

export interface LatencyFigure {
  n: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

/**
 * What is timed, by the change it makes: a ring fires the Doorbell service's event every time (the
 * Chime on), or only the programmable switch's (the Chime off); a motion turns the main sensor on,
 * a person's motion the person sensor.
 */
export type Signal = 'ring' | 'silentRing' | 'motion' | 'personMotion';

/** The notification each signal is timed with: its kind, and what the motion saw as the service names it. */
const NOTIFICATION_OF: Readonly<Record<Signal, { kind: string; subtype?: string }>> = {
  ring: { kind: 'ding' },
  silentRing: { kind: 'ding' },
  motion: { kind: 'motion' },
  personMotion: { kind: 'motion', subtype: 'human' },
};

/** No single delivery on loopback takes this long unless something is broken. */
export const ARRIVAL_TIMEOUT_MS = 5_000;

/**
 * Sends notifications as the doorbell cloud would: the simulator POSTs each to the push token the
 * plugin registered (its receiver, or the relay). Every id is new, since the plugin drops a repeated
 * one as a duplicate. Rejects when the receiver or relay refuses one, so a broken path cannot pass
 * for a fast one.
 */
export class NotificationSender {
  private readonly runId = randomUUID().slice(0, 8);
  private sent = 0;

  constructor(private readonly sim: Simulator) {}

  /** Resolves with the HTTP status of the push token's answer (202 from the receiver, 200 from the relay). */
  async send(deviceId: string, signal: Signal): Promise<number> {
    this.sent += 1;
    const { status } = await this.sim.deliverMotion(deviceId, { ...NOTIFICATION_OF[signal], id: `bench-${this.runId}-${this.sent}` });
    return status;
  }

  async sendAccepted(deviceId: string, signal: Signal): Promise<void> {
    const status = await this.send(deviceId, signal);
    if (status < 200 || status >= 300) {
      throw new Error(`the push token answered ${status} to a ${signal} for doorbell ${deviceId}`);
    }
  }
}

/**
 * A path's figure: rings with the Chime on, which fire an event every time; beside them one motion
 * start and one person's motion per doorbell, and as many rings with the Chime off.
 */
export type PathLatency = LatencyFigure & { motion: LatencyFigure; personMotion: LatencyFigure; ringChimeOff: LatencyFigure };

/**
 * How many rings a path is timed with, and how long at least between two rings of one doorbell: a
 * doorbell presses at most once in 5 s, so where the plugin reads the real clock the rings wait their turn.
 */
export interface RingPace {
  samples: number;
  gapMs: number;
}

/** How a path sees the doorbells, and turns their Chime switches. */
export interface LatencyProbe {
  /**
   * Resolves with performance.now() when the change `signal` makes at doorbell `deviceId` is seen;
   * called before the notification is sent, so an arrival that beats the HTTP answer is not missed.
   */
  watch(deviceId: string, signal: Signal): Promise<number>;
  /** Turns the Chime switch of every doorbell on or off, as the Home app would. */
  setChime(doorbells: readonly string[], on: boolean): Promise<void>;
}

/**
 * `rings.samples` rings, round the doorbells, then one motion and one person's motion per doorbell,
 * then as many rings with every Chime off (turned on again after). MotionDetected changes only when
 * motion starts and falls back `motionTimeout` (at least 5 s) later, so it cannot give a thousand
 * samples in seconds; the doorbell button's events fire on every ring that is due, through the same
 * receiver, intake and platform. The motion figures show the two agree.
 */
export async function pathLatency(sender: NotificationSender, doorbells: readonly string[], probe: LatencyProbe, rings: RingPace): Promise<PathLatency> {
  const lastRingAt = new Map<string, number>();
  const trip = async (deviceId: string, signal: Signal): Promise<number> => {
    if (signal === 'ring' || signal === 'silentRing') {
      const waitMs = (lastRingAt.get(deviceId) ?? -Infinity) + rings.gapMs - performance.now();
      if (waitMs > 0) {
        await sleep(waitMs);
      }
      lastRingAt.set(deviceId, performance.now());
    }
    const arrived = probe.watch(deviceId, signal);
    // Observed even if the send fails first, so a late rejection is never left unhandled.
    arrived.catch(() => undefined);
    const sentAt = performance.now();
    await sender.sendAccepted(deviceId, signal);
    return (await arrived) - sentAt;
  };
  const ringTrips = (signal: Signal) => timeTrips(rings.samples, (index) => trip(doorbells[index % doorbells.length], signal));
  const ring = await ringTrips('ring');
  const motion = await timeTrips(doorbells.length, (index) => trip(doorbells[index], 'motion'));
  const personMotion = await timeTrips(doorbells.length, (index) => trip(doorbells[index], 'personMotion'));
  await probe.setChime(doorbells, false);
  const ringChimeOff = await ringTrips('silentRing');
  await probe.setChime(doorbells, true);
  return { ...ring, motion, personMotion, ringChimeOff };
}

/** `count` trips in a row, trip(index) timing the index-th; the figure of their latencies. */
async function timeTrips(count: number, trip: (index: number) => Promise<number>): Promise<LatencyFigure> {
  const samples: number[] = [];
  for (let index = 0; index < count; index += 1) {
    samples.push(await trip(index));
  }
  return latencyFigure(samples);
}

export function latencyFigure(samples: readonly number[]): LatencyFigure {
  const sorted = [...samples].sort((a, b) => a - b);
  // Nearest rank: the smallest sample with at least p per cent of the samples at or below it.
  const percentile = (p: number): number => round2(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN);
  return { n: sorted.length, p50Ms: percentile(50), p95Ms: percentile(95), p99Ms: percentile(99) };
}

/** Bytes in a mebibyte, for the memory figures. */
export const MIB = 1024 * 1024;

export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
