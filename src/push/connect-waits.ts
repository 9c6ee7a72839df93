/**
 * The calls waiting for the relay stream to open, each with its own timeout: all end at once when it
 * opens or the subscription stops, and one that timed out is forgotten with its timer, however many
 * pile up while the relay refuses.
 */
export class ConnectWaits {
  /** Each ends one pending wait, and removes itself. */
  private readonly waits = new Set<() => void>();

  /** Resolves with `outcome()` once ended by endAll, or after `timeoutMs`. */
  wait(timeoutMs: number, outcome: () => boolean): Promise<boolean> {
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.waits.delete(end);
        resolve(outcome());
      };
      const timer = setTimeout(end, timeoutMs);
      this.waits.add(end);
    });
  }

  endAll(): void {
    [...this.waits].forEach((end) => end());
  }
}
