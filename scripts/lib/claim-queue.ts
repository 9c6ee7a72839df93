/**
 * What a test controller received and has not handed out yet (HAP events, Matter reports), in order
 * of arrival, and a wait for the next one that matches.
 */
import { EventEmitter } from 'node:events';

export class ClaimQueue<T> {
  private readonly unclaimed: T[] = [];
  private readonly arrived = new EventEmitter();

  /** `what`: what the items are, for the timeout's message ("HAP event"). */
  constructor(private readonly what: string) {}

  push(...items: T[]): void {
    this.unclaimed.push(...items);
    this.arrived.emit('item');
  }

  /**
   * The oldest item received and not handed out yet that matches, waiting up to `timeoutMs` for one.
   * Items before it that do not match are dropped: each call moves forward.
   */
  next(matches: (item: T) => boolean, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const settle = (finish: () => void): void => {
        clearTimeout(timer);
        this.arrived.off('item', claim);
        finish();
      };
      const claim = (): void => {
        while (this.unclaimed.length > 0) {
          const item = this.unclaimed.shift() as T;
          if (matches(item)) {
            settle(() => resolve(item));
            return;
          }
        }
      };
      const timer = setTimeout(() => settle(() => reject(new Error(`No matching ${this.what} within ${timeoutMs} ms`))), timeoutMs);
      this.arrived.on('item', claim);
      claim();
    });
  }
}
