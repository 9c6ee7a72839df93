/**
 * The plugin's rounds of calls as the doorbell service sees them: each registers the push token, then
 * subscribes each doorbell. A round that subscribed every doorbell succeeded, and the plugin's next
 * one is its refresh, 12 hours later; the first registration after a success that long after it is
 * that refresh (a retry follows a failure, the round after a sign-in comes minutes after one). It also
 * follows an expired session: when the plugin first hears 401, and which doorbells are subscribed
 * again since.
 */
import type { RecordedRequest } from '../../simulator/index.js';

/** A refresh may come this much early by the service's reckoning: the round's own requests take a moment. */
const REFRESH_SLACK_MS = 60_000;

export interface ServiceWatchEvents {
  /** Every doorbell is subscribed, at `atMs`: the refresh is due `refreshMs` later. */
  allSubscribed(atMs: number): void;
  /** The plugin was answered 401 for the first time since the session expired. */
  sessionRefused(atMs: number): void;
}

export class ServiceWatch {
  /** True times of the refreshes, in order. */
  readonly refreshes: number[] = [];
  /** Doorbells subscribed again after the session expired. */
  readonly subscribedSinceExpiry = new Set<string>();
  private lastSuccessAt: number | undefined;
  private refreshPending = false;
  private subscribedThisRound = new Set<string>();
  private expiredAt: number | undefined;
  private refusedAt: number | undefined;

  constructor(
    private readonly deviceIds: readonly string[],
    private readonly refreshMs: number,
    private readonly now: () => number,
    private readonly events: ServiceWatchEvents,
  ) {}

  /** The session stopped working now. */
  sessionExpired(): void {
    this.expiredAt = this.now();
  }

  /**
   * Whether the service would send this doorbell's alerts: not between the expiry and its next
   * subscription. Another account's doorbell, whose session never expires, always.
   */
  sends(deviceId: string): boolean {
    return !this.deviceIds.includes(deviceId) || this.expiredAt === undefined || this.subscribedSinceExpiry.has(deviceId);
  }

  /** Every doorbell of the expired session is subscribed again with a new one (false before any expiry). */
  get resubscribed(): boolean {
    return this.expiredAt !== undefined && this.subscribedSinceExpiry.size === this.deviceIds.length;
  }

  onRequest({ route, status, path }: RecordedRequest): void {
    const atMs = this.now();
    if (status === 401 && this.expiredAt !== undefined && this.refusedAt === undefined) {
      this.refusedAt = atMs;
      this.events.sessionRefused(atMs);
    }
    if (route === 'register') {
      this.registered(atMs);
    } else if (route === 'subscribe' && status >= 200 && status < 300) {
      const deviceId = this.deviceIds.find((id) => path.includes(`/doorbots/${id}/`));
      if (deviceId !== undefined) {
        this.subscribed(deviceId, atMs);
      }
    }
  }

  private registered(atMs: number): void {
    if (this.refreshPending && this.lastSuccessAt !== undefined && atMs - this.lastSuccessAt >= this.refreshMs - REFRESH_SLACK_MS) {
      this.refreshes.push(atMs);
    }
    this.refreshPending = false;
    this.subscribedThisRound = new Set();
  }

  private subscribed(deviceId: string, atMs: number): void {
    this.subscribedThisRound.add(deviceId);
    // The expired session's token gets 401: a subscription since then is the new session's.
    if (this.expiredAt !== undefined) {
      this.subscribedSinceExpiry.add(deviceId);
    }
    if (this.subscribedThisRound.size === this.deviceIds.length) {
      this.lastSuccessAt = atMs;
      this.refreshPending = true;
      this.subscribedThisRound = new Set();
      this.events.allSubscribed(atMs);
    }
  }
}
