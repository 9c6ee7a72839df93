import type { Logger } from '../log.js';

/** Why relay alerts cannot arrive. */
export interface DeliveryOutage {
  /** Since when the stream is down, on this machine's clock. */
  since: number;
  /** The relay's last answer refused access (401, 403): a token to fix, not a network to wait for. */
  refused: boolean;
  /**
   * How long before this report the fault is dated: `faultAfterMs` after the stream went down, which
   * for a stream found silent only by the alive timeout was before it was noticed; 0 when on time.
   */
  faultedForMs: number;
}

export interface RelayOutageOptions {
  /** Down for longer than this, alerts count as unable to arrive. */
  faultAfterMs: number;
  log: Logger;
  /** A monotonic clock (performance.now): a wall clock set back while down would put the fault off by as much. */
  now: () => number;
  /** Down too long (true, with how long it has been down, in ms), or back after that (false). */
  onDeliveryDown: (down: boolean, downForMs?: number) => void;
}

/**
 * Whether relay alerts can arrive: a stream down for longer than `faultAfterMs` gets one warning and
 * the doorbells' fault, and its return clears the fault. A short break, or the quiet between
 * keepalives, is no outage. It owns one timer, cleared by `up` and `stop`.
 */
export class RelayOutage {
  private timer: NodeJS.Timeout | undefined;
  private reported = false;
  private stopped = false;

  constructor(private readonly options: RelayOutageOptions) {}

  /**
   * The stream is down, since `downForMs` ago; `problem()` says why, for the warning (the reason may
   * change while it stays down).
   */
  down(problem: () => string, downForMs = 0): void {
    if (this.stopped) {
      return;
    }
    const { faultAfterMs, log, now, onDeliveryDown } = this.options;
    clearTimeout(this.timer);
    const downSince = now() - downForMs;
    this.timer = setTimeout(() => {
      this.reported = true;
      const seconds = Math.round((now() - downSince) / 1000);
      log.warn(`Push relay unreachable for ${seconds} s (${problem()}): motion alerts cannot arrive until it is back. Still trying.`);
      onDeliveryDown(true, now() - downSince);
    }, Math.max(0, faultAfterMs - downForMs));
  }

  up(): void {
    clearTimeout(this.timer);
    if (this.reported) {
      this.reported = false;
      this.options.onDeliveryDown(false);
    }
  }

  /** Nothing is reported any more. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
