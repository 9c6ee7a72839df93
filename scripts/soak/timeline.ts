/**
 * What the driver is to do and when, in true time, and what it did: the events of the week in time
 * order (those at the same moment in the order they were planned), each run once its time has come,
 * and a record of the ones worth a line in the summary.
 */

interface Planned {
  atMs: number;
  label: string | undefined;
  run: () => unknown;
}

export interface Entry {
  atMs: number;
  label: string;
}

const HOUR_MS = 3_600_000;

export class Timeline {
  private readonly planned: Planned[] = [];
  private readonly done: Entry[] = [];

  constructor(
    private readonly launchAt: number,
    private readonly now: () => number,
    /** Told of each event planned, so that time running meanwhile stops for it. */
    private readonly wake: (atMs: number) => void = () => undefined,
  ) {}

  /** Plans `run` at `atMs`; with a label, the summary lists it. */
  at(atMs: number, label: string | undefined, run: () => unknown): void {
    this.wake(atMs);
    let index = this.planned.length;
    while (index > 0 && this.planned[index - 1].atMs > atMs) {
      index -= 1;
    }
    this.planned.splice(index, 0, { atMs, label, run });
  }

  /** Something that happened now, for the summary. */
  note(label: string): void {
    this.done.push({ atMs: this.now(), label });
  }

  /** When the next event is due; Infinity when none is planned. */
  nextAt(): number {
    return this.planned[0]?.atMs ?? Infinity;
  }

  /** Runs every event that is due, in order, each to its end. */
  async runDue(): Promise<void> {
    while (this.planned.length > 0 && this.planned[0].atMs <= this.now()) {
      const { label, run } = this.planned.shift()!;
      if (label !== undefined) {
        this.note(label);
      }
      await run();
    }
  }

  entries(): readonly Entry[] {
    return this.done;
  }

  /** `day 3 14:05:10`: days and time since the launch, day 1 being the first. */
  when(atMs: number): string {
    const sinceMs = Math.max(0, atMs - this.launchAt);
    const day = Math.floor(sinceMs / (24 * HOUR_MS)) + 1;
    const clock = new Date(sinceMs % (24 * HOUR_MS)).toISOString().slice(11, 19);
    return `day ${day} ${clock}`;
  }
}
