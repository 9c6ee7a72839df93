import type { Reply } from '../incoming.js';
import { errorForStatus, errorReply } from './errors.js';
import type { SubscribeRefusal } from './types.js';

function validateRefusal({ status, times, retryAfter }: SubscribeRefusal): void {
  const rules: Array<[boolean, string]> = [
    [!(Number.isInteger(status) && status >= 400 && status <= 599), 'status must be 400-599'],
    [times !== undefined && !(Number.isInteger(times) && times >= 0), 'times must be an integer >= 0'],
    [retryAfter !== undefined && (retryAfter === '' || /[\r\n]/.test(retryAfter)), 'retryAfter must be a non-empty header value'],
  ];
  const broken = rules.filter(([isBroken]) => isBroken).map(([, message]) => message);
  if (broken.length > 0) {
    throw new TypeError(`subscription refusal ${broken.join('; ')}`);
  }
}

/**
 * The refusal waiting for the next subscribe requests. A new one replaces it, so `times: 0` withdraws
 * whatever is left of it.
 */
export class RefusalSlot {
  private refusal: SubscribeRefusal | undefined;
  private remaining = 0;

  set(refusal: SubscribeRefusal): void {
    validateRefusal(refusal);
    this.refusal = { ...refusal };
    this.remaining = refusal.times ?? 1;
  }

  /** The answer for this subscribe request instead of a stream, spending one of the `times`; undefined to go on. */
  take(): Reply | undefined {
    if (this.refusal === undefined || this.remaining === 0) {
      return undefined;
    }
    this.remaining -= 1;
    const { status, retryAfter } = this.refusal;
    return errorReply(errorForStatus(status), retryAfter === undefined ? {} : { 'retry-after': retryAfter });
  }
}
