import type { DoorbellAccessories } from './accessories/doorbell-accessories.js';
import { MIN_RING_INTERVAL_MS } from './accessories/doorbell-accessory.js';
import { quoteForLog, type Logger } from './log.js';
import type { DoorbellNotification } from './push/notification.js';
import type { StatusBoard } from './status/status-board.js';

/**
 * What each notification does, whichever way it came: the doorbell's accessory decides what it shows
 * (by its switches, and at most one press every 5 s), the log says what it decided, and the status
 * notes it. HomeKit first: the status only notes a time or a count, and is written later.
 */
export class NotificationHandler {
  constructor(
    private readonly accessories: DoorbellAccessories,
    private readonly board: StatusBoard,
    private readonly log: Logger,
    /** A clock that only moves forward: a wall clock set back would silence a doorbell for that long. */
    private readonly monotonicNow: () => number = () => performance.now(),
  ) {}

  /** Called as the notification is accepted, so that is the time the accessory's changes carry, for whatever follows them. */
  handle(notification: DoorbellNotification): void {
    const acceptedAt = this.monotonicNow();
    const accessory = this.accessories.get(notification.deviceId);
    if (accessory === undefined) {
      this.board.dropped('unconfigured');
      this.log.debug(`Ignored a ${quoteForLog(notification.kind)} notification for doorbell ${notification.deviceId}: not configured`);
      return;
    }
    if (notification.kind === 'motion') {
      const { detection } = notification;
      if (accessory.motionDetected(detection, acceptedAt)) {
        this.log.info(`Motion at ${accessory.name}${detection === undefined ? '' : ` (${detection})`}`);
      } else {
        this.log.debug(`Ignored motion at ${accessory.name}: its Motion Alerts switch is off`);
      }
      // Delivered, so alerts are flowing, whatever the Motion Alerts switch made of it.
      this.board.motion(notification.deviceId);
      return;
    }
    const rang = notification.kind === 'ding' ? accessory.rang(acceptedAt, notification.relayTime) : undefined;
    if (rang === 'chimed' || rang === 'silent') {
      this.log.info(`Doorbell rang at ${accessory.name}${rang === 'silent' ? ' (Chime off: automations only)' : ''}`);
      this.board.ring(notification.deviceId);
    } else if (rang === 'too-soon') {
      this.board.dropped('flood');
      this.log.debug(`Ignored a ring at ${accessory.name}: it pressed less than ${MIN_RING_INTERVAL_MS / 1000} s ago`);
    } else {
      this.log.debug(`Ignored a ${quoteForLog(notification.kind)} notification at ${accessory.name}`);
    }
  }
}
