/**
 * The doorbell service's side of each ring: sent to the relay unless the service would not send it
 * (the session expired and the doorbell is not subscribed again yet), one at a time and in order, as
 * the relay is to pass them on; one the relay does not take (it is restarting) is offered again a
 * second later, as a push service retries, and counted lost if it still has not got through after ten
 * minutes.
 */
import type { Cloud } from './cloud.js';
import type { LedgerRing, RingLedger } from './ring-ledger.js';
import type { ServiceWatch } from './service-watch.js';
import type { Timeline } from './timeline.js';

const REDELIVERY_MS = 1_000;
const GIVE_UP_MS = 10 * 60_000;

export class RingDelivery {
  private readonly backlog: Array<{ ring: LedgerRing; since: number }> = [];

  constructor(
    private readonly cloud: Cloud,
    private readonly ledger: RingLedger,
    private readonly watch: ServiceWatch,
    private readonly timeline: Timeline,
    private readonly now: () => number,
  ) {}

  /** Rings not yet taken by the relay. */
  get pending(): number {
    return this.backlog.length;
  }

  async ring(ring: LedgerRing): Promise<void> {
    if (!this.watch.sends(ring.deviceId)) {
      this.ledger.notSent(ring);
      return;
    }
    this.backlog.push({ ring, since: this.now() });
    if (this.backlog.length === 1) {
      await this.deliverBacklog();
    }
  }

  private async deliverBacklog(): Promise<void> {
    while (this.backlog.length > 0) {
      const { ring, since } = this.backlog[0];
      this.ledger.publishing(ring);
      if (!(await this.cloud.deliver(ring.deviceId, ring.id, 'ding'))) {
        const givenUp = this.now() - since >= GIVE_UP_MS;
        this.ledger.refused(ring, givenUp);
        if (!givenUp) {
          this.timeline.at(this.now() + REDELIVERY_MS, undefined, () => this.deliverBacklog());
          return;
        }
      }
      this.backlog.shift();
    }
  }
}
