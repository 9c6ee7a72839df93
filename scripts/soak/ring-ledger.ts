/**
 * Every ring of the week, accounted for in exactly one way: delivered (the doorbell button's
 * ProgrammableSwitchEvent fired), stale (the plugin dropped it as too old after a reconnect and said
 * so), afterExpiry (the doorbell service would not send it: the session had expired and the doorbell
 * was not subscribed again yet), or lost. The plugin takes relay messages one at a time in the relay's
 * order, which is the order they were published in, and each message it takes ends in a button event
 * or a stale drop at once: so each outcome belongs to the oldest ring published and not yet accounted
 * for, and a ring skipped over was lost.
 */

export type RingOutcome = 'delivered' | 'stale' | 'afterExpiry' | 'lost';

export interface LedgerRing {
  readonly index: number;
  readonly deviceId: string;
  /** The notification's id, unique to the ring. */
  readonly id: string;
  outcome: RingOutcome | undefined;
  /** Delivered through a stream opened after it was published: the reconnect's catch-up. */
  caughtUp: boolean;
  /** How many relay streams had opened when it was published. */
  publishedAtStream: number;
}

export interface RingCounts {
  sent: number;
  delivered: number;
  caughtUp: number;
  stale: number;
  afterExpiry: number;
  lost: number;
}

export class RingLedger {
  readonly rings: LedgerRing[];
  /** Button events and stale drops no ring published and unaccounted for explains: a ring twice, or one never sent. */
  unexplained = 0;
  /** Published to the relay, no outcome yet, in the relay's order. */
  private readonly awaiting: LedgerRing[] = [];
  private streams = 0;

  constructor(deviceIds: readonly string[]) {
    this.rings = deviceIds.map((deviceId, index) => ({
      index,
      deviceId,
      id: `soak-ring-${index + 1}`,
      outcome: undefined,
      caughtUp: false,
      publishedAtStream: 0,
    }));
  }

  /** A ring the plan did not hold (one drawn while the week runs), counted as the others are. */
  add(deviceId: string): LedgerRing {
    const index = this.rings.length;
    const ring = { index, deviceId, id: `soak-ring-${index + 1}`, outcome: undefined, caughtUp: false, publishedAtStream: 0 };
    this.rings.push(ring);
    return ring;
  }

  /** The plugin's relay stream opened (again). */
  streamOpened(): void {
    this.streams += 1;
  }

  /** The service would not send it. */
  notSent(ring: LedgerRing): void {
    ring.outcome = 'afterExpiry';
  }

  /** About to be published: the relay may hand it on before the publisher hears back. */
  publishing(ring: LedgerRing): void {
    ring.publishedAtStream = this.streams;
    this.awaiting.push(ring);
  }

  /** The relay did not take it: it is offered again later, or given up. */
  refused(ring: LedgerRing, givenUp: boolean): void {
    this.awaiting.splice(this.awaiting.indexOf(ring), 1);
    if (givenUp) {
      ring.outcome = 'lost';
    }
  }

  /** The button of `deviceId` fired. */
  rang(deviceId: string): void {
    const index = this.awaiting.findIndex((ring) => ring.deviceId === deviceId);
    if (index === -1) {
      this.unexplained += 1;
      return;
    }
    this.skipTo(index);
    const ring = this.awaiting.shift()!;
    ring.outcome = 'delivered';
    ring.caughtUp = this.streams > ring.publishedAtStream;
  }

  /** The plugin dropped a relay message as stale. */
  droppedStale(): void {
    const ring = this.awaiting.shift();
    if (ring === undefined) {
      this.unexplained += 1;
      return;
    }
    ring.outcome = 'stale';
  }

  /** The week is over: what has no outcome now was lost. */
  counts(): RingCounts {
    const outcomes = this.rings.map((ring) => ring.outcome ?? 'lost');
    const count = (outcome: RingOutcome): number => outcomes.filter((each) => each === outcome).length;
    return {
      sent: this.rings.length,
      delivered: count('delivered'),
      caughtUp: this.rings.filter((ring) => ring.outcome === 'delivered' && ring.caughtUp).length,
      stale: count('stale'),
      afterExpiry: count('afterExpiry'),
      lost: count('lost'),
    };
  }

  /** Rings ahead of the one that arrived got no outcome of their own: they were skipped, lost. */
  private skipTo(index: number): void {
    this.awaiting.splice(0, index).forEach((ring) => {
      ring.outcome = 'lost';
    });
  }
}
