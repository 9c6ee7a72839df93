import { createHash } from 'node:crypto';

export interface DuplicateFilterOptions {
  /** How long a delivered event id is remembered, in milliseconds. Default 10 minutes. */
  windowMs?: number;
  /** The most event ids remembered at once; the oldest is forgotten first. Default 1,000. */
  maxEntries?: number;
  /** A monotonic clock, in ms (performance.now when absent): a wall clock stepping forward would forget recent ids. */
  now?: () => number;
}

const TEN_MINUTES_MS = 10 * 60 * 1000;
const DEFAULT_MAX_ENTRIES = 1000;

/**
 * Remembers recently delivered (doorbell, event id) pairs so that a redelivered notification is dropped.
 * The window counts from the first delivery: repeats do not extend it, so the map stays ordered by age
 * and both expiry and eviction only ever look at its oldest end.
 */
export class DuplicateFilter {
  private readonly firstSeenAt = new Map<string, number>();
  private readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: DuplicateFilterOptions = {}) {
    this.windowMs = options.windowMs ?? TEN_MINUTES_MS;
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * True when the same doorbell delivered the same event id within the window. Otherwise remembers the
   * pair and returns false. A notification without an event id is never a duplicate.
   */
  isDuplicate(deviceId: string, eventId: string | undefined): boolean {
    if (eventId === undefined) {
      return false;
    }
    const now = this.now();
    this.forgetExpired(now);
    const key = entryKey(deviceId, eventId);
    if (this.firstSeenAt.has(key)) {
      return true;
    }
    this.forgetOldestBeyond(this.maxEntries - 1);
    this.firstSeenAt.set(key, now);
    return false;
  }

  private forgetExpired(now: number): void {
    for (const [key, seenAt] of this.firstSeenAt) {
      if (now - seenAt < this.windowMs) {
        return;
      }
      this.firstSeenAt.delete(key);
    }
  }

  private forgetOldestBeyond(limit: number): void {
    for (const key of this.firstSeenAt.keys()) {
      if (this.firstSeenAt.size <= limit) {
        return;
      }
      this.firstSeenAt.delete(key);
    }
  }
}

/**
 * Hashed so that a thousand remembered 16 KiB event ids cost no more memory than a thousand short ones.
 * Device ids are digits only, so the separator keeps every pair distinct.
 */
function entryKey(deviceId: string, eventId: string): string {
  return createHash('sha256').update(`${deviceId}:${eventId}`).digest('base64');
}
