import { createHash } from 'node:crypto';
import { errorMessage, type Logger } from '../log.js';
import { type DoorbellNotification, parseNotification } from './notification.js';

/** Where both delivery modes hand a notification in: size, text, its shapes, and duplicates. */

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text, or undefined when it is not UTF-8: a stranger's bytes are never guessed at. */
export function decodeUtf8(body: Buffer): string | undefined {
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

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

/** 16 KiB: 16,384 bytes are allowed, one more is refused. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Why a pushed body was not passed on: it was not a notification, or it repeated an event id. */
export type IntakeDrop = 'invalid' | 'duplicate';

/** Told of each body not passed on, by cause; for counting only, so it must return at once. */
export type DropListener = (cause: IntakeDrop) => void;

/** How a pushed body was judged; the reason is for the debug log and never quotes the body. */
export type IntakeDecision = { accepted: true; reason: string } | { accepted: false; tooLarge: boolean; reason: string };

/**
 * Where every pushed body is judged, whichever way it came (the receiver, the relay): size, UTF-8,
 * JSON, the notification's shape, duplicates. A fresh valid notification goes to `onNotification`.
 */
export class NotificationIntake {
  private readonly duplicates: DuplicateFilter;

  constructor(
    private readonly onNotification: (notification: DoorbellNotification) => void,
    private readonly log: Logger,
    /** The duplicate window's monotonic clock (performance.now when absent), for tests. */
    now?: () => number,
    private readonly onDropped: DropListener = () => undefined,
  ) {
    this.duplicates = new DuplicateFilter(now === undefined ? {} : { now });
  }

  /** `relayTime`: the relay's `time` of the message that carried the body, passed on with the notification. */
  accept(body: Buffer, relayTime?: number): IntakeDecision {
    const decision = this.judge(body, relayTime);
    if (!decision.accepted) {
      this.onDropped('invalid');
    }
    return decision;
  }

  private judge(body: Buffer, relayTime: number | undefined): IntakeDecision {
    if (body.length > MAX_BODY_BYTES) {
      return { accepted: false, tooLarge: true, reason: `body is larger than ${MAX_BODY_BYTES} bytes` };
    }
    const text = decodeUtf8(body);
    if (text === undefined) {
      return { accepted: false, tooLarge: false, reason: 'body is not UTF-8' };
    }
    const parsed = parseNotification(text);
    if (!parsed.ok) {
      return { accepted: false, tooLarge: false, reason: parsed.reason };
    }
    const { notification } = parsed;
    if (this.duplicates.isDuplicate(notification.deviceId, notification.id)) {
      this.onDropped('duplicate');
      return { accepted: true, reason: `duplicate for doorbell ${notification.deviceId} dropped` };
    }
    this.deliver(relayTime === undefined ? notification : { ...notification, relayTime });
    return { accepted: true, reason: `notification for doorbell ${notification.deviceId}` };
  }

  /** The sender did its part; a failure in the platform's handler is ours to report, not the sender's. */
  private deliver(notification: DoorbellNotification): void {
    try {
      this.onNotification(notification);
    } catch (error) {
      this.log.warn(`Handling a notification for doorbell ${notification.deviceId} failed: ${errorMessage(error)}`);
    }
  }
}
