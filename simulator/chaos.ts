import type { Chaos, Fault } from './types.js';

/**
 * The faults a network and a busy service inflict: a 503, a reset connection, a stall, a 429 with
 * Retry-After. Each a quarter of the failures.
 */
export class ChaosFaults {
  private readonly random: () => number;

  constructor(private readonly chaos: Chaos) {
    this.random = mulberry32(chaos.seed);
  }

  /** A fault for this request, or undefined when it is spared. */
  next(): Fault | undefined {
    if (this.random() >= this.chaos.probability) {
      return undefined;
    }
    const faults: Fault[] = [
      { status: 503 },
      { reset: true },
      { delayMs: this.chaos.stallMs ?? 5_000, status: 503 },
      { status: 429, retryAfter: '1' },
    ];
    return faults[Math.floor(this.random() * faults.length)];
  }
}

/** A tiny seeded generator: good enough to pick faults, and the same for a seed on every machine. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}
