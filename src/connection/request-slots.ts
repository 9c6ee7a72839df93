/**
 * A fixed number of requests to the doorbell service at once, whichever part of the connection sends
 * them: the registration, the subscriptions of a pass and the doorbell list read all take a slot, so a
 * read that falls due in the middle of a pass waits its turn instead of making one request too many.
 * A slot is held for the whole call, its retries included.
 */
export class RequestSlots {
  private busy = 0;
  /** Callers waiting for a slot, first come first served; each is handed the slot of the one that ends. */
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /** Sends `request` once a slot is free. Rejects without sending it when `signal` aborts first. */
  async run<T>(request: () => Promise<T>, signal: AbortSignal): Promise<T> {
    await this.take(signal);
    try {
      return await request();
    } finally {
      this.release();
    }
  }

  private async take(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.busy < this.size) {
      this.busy += 1;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const granted = (): void => {
        signal.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = (): void => {
        this.waiting.splice(this.waiting.indexOf(granted), 1);
        reject(signal.reason);
      };
      this.waiting.push(granted);
      signal.addEventListener('abort', aborted, { once: true });
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.busy -= 1;
    } else {
      // The slot passes straight on: as many are busy as before.
      next();
    }
  }
}
