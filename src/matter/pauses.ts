/**
 * Waits that end early when their owner stops: each resolves true after its time, or false at once
 * when disposed, so no loop that waits outlives the plugin and no timer is left behind.
 */
export class Pauses {
  /** Each pending wait's way to cancel its timer and settle its promise with false. */
  private readonly pending = new Set<() => void>();
  private stopped = false;

  get disposed(): boolean {
    return this.stopped;
  }

  /** 0 waits for the next turn of the event loop (after I/O), anything else for that many milliseconds. */
  pause(ms: number): Promise<boolean> {
    if (this.stopped) {
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const finish = (completed: boolean): void => {
        this.pending.delete(cancel);
        resolve(completed);
      };
      let cancel: () => void;
      if (ms === 0) {
        const immediate = setImmediate(() => finish(true));
        cancel = () => {
          clearImmediate(immediate);
          finish(false);
        };
      } else {
        const timer = setTimeout(() => finish(true), ms);
        cancel = () => {
          clearTimeout(timer);
          finish(false);
        };
      }
      this.pending.add(cancel);
    });
  }

  dispose(): void {
    this.stopped = true;
    [...this.pending].forEach((cancel) => cancel());
  }
}
