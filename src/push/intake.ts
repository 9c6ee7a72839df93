import { errorMessage, type Logger } from '../log.js';
import { DuplicateFilter } from './duplicate-filter.js';
import { parseNotification, type DoorbellNotification } from './notification.js';
import { decodeUtf8 } from './request-body.js';

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
