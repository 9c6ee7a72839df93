/**
 * The soak's ring ledger: each outcome the plugin shows (a button event, a stale drop) belongs to
 * the oldest ring published and not yet accounted for; a ring skipped over is lost; a ring that came
 * through a stream opened after its publish was caught up; every ring ends in exactly one count.
 */
import { describe, expect, it } from '@jest/globals';
import { RingLedger } from '../../scripts/soak/ring-ledger.js';

const [FRONT, BACK] = ['1234567', '9007199254740993'];

describe('the soak\'s ring ledger', () => {
  it('counts live deliveries, catch-ups after a reconnect, stale drops and rings the service would not send', () => {
    const ledger = new RingLedger([FRONT, BACK, FRONT, BACK, FRONT, BACK]);
    const [live, notSent, oldOne, recent, alsoRecent, never] = ledger.rings;
    ledger.streamOpened();
    ledger.publishing(live);
    ledger.rang(FRONT);
    ledger.notSent(notSent);
    // The stream breaks; three rings wait in the relay's cache, the oldest too old by the time it is back.
    ledger.publishing(oldOne);
    ledger.publishing(recent);
    ledger.publishing(alsoRecent);
    ledger.streamOpened();
    ledger.droppedStale();
    ledger.rang(BACK);
    ledger.rang(FRONT);
    ledger.publishing(never);

    expect(ledger.counts()).toEqual({ sent: 6, delivered: 3, caughtUp: 2, stale: 1, afterExpiry: 1, lost: 1 });
    expect(ledger.rings.map(({ outcome }) => outcome)).toEqual(['delivered', 'afterExpiry', 'stale', 'delivered', 'delivered', undefined]);
    expect(ledger.unexplained).toBe(0);
  });

  it('counts a ring skipped over as lost, and an event or a drop no ring explains apart', () => {
    const ledger = new RingLedger([FRONT, BACK, FRONT]);
    ledger.streamOpened();
    ledger.rings.forEach((ring) => ledger.publishing(ring));
    ledger.rang(FRONT);
    // BACK's ring vanished without a trace: the next FRONT event passes it by.
    ledger.rang(FRONT);
    ledger.rang(BACK);
    ledger.droppedStale();

    expect(ledger.counts()).toMatchObject({ delivered: 2, lost: 1 });
    expect(ledger.unexplained).toBe(2);
  });

  it('offers a refused ring again in its place, and counts one given up on as lost', () => {
    const ledger = new RingLedger([FRONT, FRONT]);
    const [first, second] = ledger.rings;
    ledger.publishing(first);
    ledger.refused(first, false);
    ledger.publishing(first);
    ledger.rang(FRONT);
    ledger.publishing(second);
    ledger.refused(second, true);

    expect(ledger.counts()).toMatchObject({ sent: 2, delivered: 1, lost: 1 });
    expect(ledger.unexplained).toBe(0);
  });
});
