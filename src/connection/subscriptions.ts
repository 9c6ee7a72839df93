import pMap from 'p-map';
import type { DoorbellClient } from '../cloud/doorbell.js';
import { CloudError } from '../cloud/errors.js';
import { errorMessage, type Logger } from '../log.js';
import type { RequestSlots } from './request-slots.js';

/**
 * Many doorbells are subscribed concurrently, a bounded number at once: the requests in flight to the
 * doorbell service in all, the doorbell list read's included (the connection's RequestSlots).
 */
export const SUBSCRIPTION_CONCURRENCY = 8;

export interface SubscribedDoorbell {
  deviceId: string;
  name: string;
}

/** What the subscriptions tell the accessories, doorbell by doorbell, as each answer arrives. */
export interface SubscriptionListener {
  subscribed(deviceId: string): void;
  /** `error` is why, a CloudError as a rule. */
  subscriptionFailed(deviceId: string, error: unknown): void;
}

/**
 * The motion subscriptions of every configured doorbell: which are confirmed, and subscribing the
 * others. Each doorbell's outcome is reported the moment it is known, so a doorbell whose
 * subscription keeps failing never holds back the others.
 */
export class Subscriptions {
  private readonly confirmed = new Set<string>();

  constructor(
    private readonly doorbells: readonly SubscribedDoorbell[],
    private readonly listener: SubscriptionListener,
    private readonly log: Logger,
    private readonly slots: RequestSlots,
  ) {}

  /** The refresh subscribes every doorbell again. */
  forgetConfirmed(): void {
    this.confirmed.clear();
  }

  /**
   * Subscribes each doorbell not yet confirmed; resolves whether all are confirmed now. Rejects with
   * the CloudError of a session the service no longer accepts, after the others have answered.
   */
  async subscribePending(client: DoorbellClient, signal: AbortSignal): Promise<boolean> {
    const pending = this.doorbells.filter(({ deviceId }) => !this.confirmed.has(deviceId));
    const failures = await pMap(pending, (doorbell) => this.subscribe(client, doorbell, signal), {
      concurrency: SUBSCRIPTION_CONCURRENCY,
      signal,
    });
    const sessionError = failures.find((error) => error instanceof CloudError && error.sessionInvalid);
    if (sessionError !== undefined) {
      throw sessionError;
    }
    this.logProgress(pending, failures);
    return this.confirmed.size === this.doorbells.length;
  }

  /** Resolves the failure instead of rejecting, so one doorbell cannot stop the others. */
  private async subscribe(client: DoorbellClient, doorbell: SubscribedDoorbell, signal: AbortSignal): Promise<unknown> {
    try {
      await this.slots.run(() => client.subscribeToMotion(doorbell.deviceId, { signal }), signal);
    } catch (error) {
      if (!signal.aborted && !(error instanceof CloudError && error.sessionInvalid)) {
        this.listener.subscriptionFailed(doorbell.deviceId, error);
      }
      return error;
    }
    this.confirmed.add(doorbell.deviceId);
    this.listener.subscribed(doorbell.deviceId);
    return undefined;
  }

  private logProgress(attempted: readonly SubscribedDoorbell[], failures: readonly unknown[]): void {
    attempted.forEach((doorbell, index) => {
      if (failures[index] !== undefined) {
        this.log.warn(`Could not subscribe to motion alerts of ${doorbell.name}: ${errorMessage(failures[index])}`);
      }
    });
    const waiting = this.doorbells.filter(({ deviceId }) => !this.confirmed.has(deviceId)).map(({ name }) => name);
    const summary = `${this.confirmed.size} of ${this.doorbells.length} doorbells subscribed to motion alerts`;
    this.log.info(waiting.length === 0 ? summary : `${summary}; still trying: ${waiting.join(', ')}`);
  }
}
