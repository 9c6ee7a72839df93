/**
 * What happens during the simulated week, drawn from one seed so that a run can be repeated: when
 * each ring comes and at which doorbell, when the relay restarts and for how long, when the home is
 * cut off from the relay (for half an hour, and for 2.5 minutes on a half-open stream), when a web
 * page answers in the relay's place, when Homebridge restarts and when it is killed, when the host's
 * clock jumps, when the disk is full, when a doorbell's battery runs low and when a doorbell is offline
 * for an hour (both at fixed times early in the week). The session's expiry and
 * the doorbell service's outage are placed around a refresh, whose time only the run knows: the plan
 * says which refresh. Times are in ms after the launch.
 */
import fc from 'fast-check';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/**
 * The faults of a week long enough to open the Doorbell Alerts sensor, each once: the home cut off
 * from the relay for half an hour, the half-open stream of the short cut, a web page answering in the
 * relay's place, the session refused, the doorbell service down across a refresh, and one doorbell
 * offline for an hour. The relay's restarts and Homebridge's are shorter than a minute and never count.
 */
export const OUTAGES_PER_WEEK = 6;

/** The plugin reads each account's doorbell list this often: an offline doorbell shows from the next read. */
export const LIST_READ_MS = 15 * MINUTE_MS;

/**
 * The doorbell offline for an hour, from this long after the week starts: after the battery has run
 * low, and done (with the read that finds it back) well before the earliest Homebridge restart, the
 * quick run's at 2.4 hours. Only the first doorbell goes offline.
 */
export const OFFLINE_AT_MS = 40 * MINUTE_MS;
export const OFFLINE_FOR_MS = HOUR_MS;


/** How long Homebridge is down when it restarts, and when it is killed. */
export const HOMEBRIDGE_DOWN_MS = 30_000;

/** The half-open cut: the home's connection silent this long from right after a keepalive. */
export const HALF_OPEN_CUT_MS = 150_000;

/** Its ring comes this long after the keepalive that was the stream's last sign of life. */
export const HALF_OPEN_RING_AFTER_MS = 5_000;

/** The two rings of the long cut: the later one this long before the home reaches the relay again. */
export const CUT_PAIR_BEFORE_END_MS = 20_000;

/** No ring of the random ones comes this near a planned case, so each case plays out as planned. */
export const CASE_CLEARANCE_MS = 5 * MINUTE_MS;

/** Rings come at least this far apart at any one doorbell, as a person rings. */
export const RING_SPACING_MS = 10_000;

export interface Ring {
  /** For a ring that comes after the half-open cut's keepalive, the earliest it can come. */
  atMs: number;
  /** Index into the configured doorbells. */
  doorbell: number;
  /** The half-open cut's ring: it comes HALF_OPEN_RING_AFTER_MS after the keepalive the cut follows, which only the run knows. */
  afterKeepalive?: true;
}

/** Homebridge stopped at atMs and started again HOMEBRIDGE_DOWN_MS later, rings published meanwhile. */
export interface HomebridgeRestart {
  atMs: number;
  /** Killed: the platform's shutdown is not called, its timers and sockets simply dropped. Else a restart. */
  abrupt: boolean;
}

export interface WeekPlan {
  seed: number;
  days: number;
  /** The scheduled 12-hour refreshes the week runs through; it ends after the last of them. */
  refreshes: number;
  /** In time order: the random ones and those of the planned cases (restarts, the cuts), all counted among the week's. */
  rings: Ring[];
  /** Each stops the relay at atMs and starts it again downMs later (within 30 s), its cache kept. */
  relayRestarts: Array<{ atMs: number; downMs: number }>;
  /** The home cannot reach the relay from atMs for forMs; the relay keeps accepting alerts. */
  homeCut: { atMs: number; forMs: number };
  /**
   * From atMs for forMs, the relay's address answers the home with a web page (200, HTML), as a captive
   * portal or a proxy's error page does; the relay itself keeps accepting alerts.
   */
  webPage: { atMs: number; forMs: number };
  /**
   * From the first keepalive the home gets after atMs, the home's connection is cut for forMs: the
   * stream goes silent without closing, and a ring comes 5 s after that keepalive.
   */
  halfOpenCut: { atMs: number; forMs: number };
  /** A restart, then a kill, each of HOMEBRIDGE_DOWN_MS, in time order. */
  homebridgeRestarts: HomebridgeRestart[];
  /** The session expires expiryLeadMs before the first refresh due after this; 401 on every call from then on. */
  sessionExpiry: { beforeRefreshAfterMs: number; expiryLeadMs: number };
  /** After the plugin has noticed, the settings page signs in again this much later. */
  signInAfterMs: number;
  /** The doorbell service answers 503 from leadMs before the first refresh due after this, for forMs. */
  serviceUnavailable: { aroundRefreshAfterMs: number; leadMs: number; forMs: number };
  /** The host's clock jumps jumpMs forward at forwardAtMs, and back at backAtMs. */
  hostClock: { forwardAtMs: number; backAtMs: number; jumpMs: number };
  /** status.json cannot be written (ENOSPC) from atMs for forMs. */
  diskFull: { atMs: number; forMs: number };
  /**
   * The doorbell service says this doorbell is offline from atMs for forMs (the control API's
   * `connection`): no ring is sent to it meanwhile, nor until the plugin's next list read after it.
   */
  offline: { doorbell: number; atMs: number; forMs: number };
  /**
   * This doorbell's battery reads `healthy` % from the launch, `low` % from lowAtMs (one warning), and
   * `replaced` % from replacedAtMs, after the kill, on the last day (one line that it is no longer low).
   * Low across both of Homebridge's restarts, so the warning must not come again after either.
   */
  battery: { doorbell: number; healthy: number; low: number; lowAtMs: number; replaced: number; replacedAtMs: number };
}

export interface WeekShape {
  days: number;
  refreshes: number;
  rings: number;
  relayRestarts: number;
  doorbells: number;
}

/** The week of the contract: 7 days, 14 refreshes, 1,000 rings, 6 relay restarts. */
export const FULL_WEEK: Omit<WeekShape, 'doorbells'> = { days: 7, refreshes: 14, rings: 1_000, relayRestarts: 6 };

/** Two days of the same, for the test suite: every kind of fault once, 4 refreshes, rings in proportion. */
export const QUICK_WEEK: Omit<WeekShape, 'doorbells'> = { days: 2, refreshes: 4, rings: Math.round((1_000 * 2) / 7), relayRestarts: 2 };

/** Uniform draws are integers below this, scaled into [0, 1). */
const RANGE = 2 ** 31;

/**
 * A stream of numbers in [0, 1) fixed by the seed, from fast-check's own generator: uniform integers
 * (without the bias towards edge values fast-check gives its tests), scaled.
 */
function seededRandom(seed: number, count: number): () => number {
  const values = fc.sample(fc.noBias(fc.integer({ min: 0, max: RANGE - 1 })), { seed, numRuns: count }).map((value) => value / RANGE);
  let next = 0;
  return () => {
    if (next >= values.length) {
      throw new Error(`the week plan drew more than ${count} random numbers`);
    }
    return values[next++];
  };
}

export function planWeek(shape: WeekShape, seed: number): WeekPlan {
  const random = seededRandom(seed, 50 * shape.rings + 1_000);
  const spanMs = shape.days * DAY_MS;
  /** A point at `fraction` of the span, give or take `spreadFraction`. */
  const around = (fraction: number, spreadFraction: number): number => Math.round(spanMs * (fraction + spreadFraction * random()));
  const between = (fromMs: number, toMs: number): number => Math.round(fromMs + (toMs - fromMs) * random());

  const homeCut = { atMs: around(0.155, 0.04), forMs: 30 * MINUTE_MS };
  // After the cut and before the session can expire (two hours before the first refresh due after
  // 0.32 of the span), on day 2 of the week and in the first half of the quick run's day 1.
  const webPage = { atMs: around(0.235, 0.03), forMs: 10 * MINUTE_MS };
  const forwardAtMs = around(0.655, 0.03);
  const hostClock = { forwardAtMs, backAtMs: forwardAtMs + between(spanMs / 84, spanMs / 28), jumpMs: HOUR_MS };
  const diskFull = { atMs: around(0.74, 0.09), forMs: HOUR_MS };
  // Before the long cut, and after the disk is full again, clear of every other fault: a restart early
  // on day 1, the half-open cut after it, the kill on the last day.
  const homebridgeRestarts: HomebridgeRestart[] = [
    { atMs: around(0.05, 0.04), abrupt: false },
    { atMs: around(0.9, 0.04), abrupt: true },
  ];
  const halfOpenCut = { atMs: around(0.1, 0.03), forMs: HALF_OPEN_CUT_MS };
  const offline = { doorbell: 0, atMs: OFFLINE_AT_MS, forMs: OFFLINE_FOR_MS };
  // The other doorbell's battery, where there is one: the offline one's case stays its own.
  const battery = { doorbell: shape.doorbells > 1 ? 1 : 0, healthy: 80, low: 15, lowAtMs: 20 * MINUTE_MS, replaced: 100, replacedAtMs: spanMs - HOUR_MS };
  const cases = planCaseRings(shape.doorbells, homeCut, halfOpenCut, homebridgeRestarts, offline, random);
  const restartSpans = homebridgeRestarts.map(({ atMs }) => ({ atMs, forMs: HOMEBRIDGE_DOWN_MS }));
  // Until the list read that finds it online again.
  const offlineSpan = { atMs: offline.atMs, forMs: offline.forMs + LIST_READ_MS };
  return {
    seed,
    days: shape.days,
    refreshes: shape.refreshes,
    rings: planRings(shape, spanMs, cases, random),
    relayRestarts: planRestarts(shape.relayRestarts, spanMs, [homeCut, webPage, halfOpenCut, offlineSpan, ...restartSpans], random),
    homeCut,
    webPage,
    halfOpenCut,
    homebridgeRestarts,
    sessionExpiry: { beforeRefreshAfterMs: Math.round(spanMs * 0.32), expiryLeadMs: 2 * HOUR_MS },
    signInAfterMs: 10 * MINUTE_MS,
    serviceUnavailable: { aroundRefreshAfterMs: Math.round(spanMs * 0.536), leadMs: HOUR_MS, forMs: 2 * HOUR_MS },
    hostClock,
    diskFull,
    offline,
    battery,
  };
}

/** The rings of the planned cases, and the spans no random ring may fall in around them (at one doorbell only, for `doorbell`). */
interface CaseRings {
  rings: Ring[];
  clear: Array<{ fromMs: number; toMs: number; doorbell?: number }>;
}

/**
 * The rings the cases need: one at each doorbell while Homebridge is down (10 and 20 s into it); two
 * 10 s apart at one doorbell late in the long cut, young enough to be shown when it ends; and the
 * half-open cut's, 5 s after its keepalive. Random rings keep clear of the restarts and of the
 * half-open cut, so that each of them has only its own rings; and none comes at the offline doorbell
 * from a few minutes before it goes offline to a few after the list read that finds it back, since
 * the service sends nothing from a doorbell it cannot reach, and an alert from it would end its
 * outage early.
 */
function planCaseRings(
  doorbells: number,
  homeCut: { atMs: number; forMs: number },
  halfOpenCut: { atMs: number; forMs: number },
  restarts: readonly HomebridgeRestart[],
  offline: WeekPlan['offline'],
  random: () => number,
): CaseRings {
  const pick = (): number => Math.floor(random() * doorbells);
  const rings: Ring[] = [];
  const clear: CaseRings['clear'] = [];
  for (const { atMs } of restarts) {
    for (let doorbell = 0; doorbell < doorbells && doorbell < 2; doorbell += 1) {
      rings.push({ atMs: atMs + (doorbell + 1) * (HOMEBRIDGE_DOWN_MS / 3), doorbell });
    }
    clear.push({ fromMs: atMs - CASE_CLEARANCE_MS, toMs: atMs + HOMEBRIDGE_DOWN_MS + CASE_CLEARANCE_MS });
  }
  const pairAt = pick();
  const secondAtMs = homeCut.atMs + homeCut.forMs - CUT_PAIR_BEFORE_END_MS;
  rings.push({ atMs: secondAtMs - RING_SPACING_MS, doorbell: pairAt }, { atMs: secondAtMs, doorbell: pairAt });
  // The keepalive comes within the relay's 45 s of atMs; the cut, and the reconnect after it, follow.
  rings.push({ atMs: halfOpenCut.atMs + HALF_OPEN_RING_AFTER_MS, doorbell: pick(), afterKeepalive: true });
  clear.push({ fromMs: halfOpenCut.atMs - CASE_CLEARANCE_MS, toMs: halfOpenCut.atMs + MINUTE_MS + halfOpenCut.forMs + CASE_CLEARANCE_MS });
  clear.push({ fromMs: offline.atMs - CASE_CLEARANCE_MS, toMs: offline.atMs + offline.forMs + LIST_READ_MS + CASE_CLEARANCE_MS, doorbell: offline.doorbell });
  return { rings, clear };
}

/**
 * The planned cases' rings, and the rest at random moments from a few minutes after the launch to a
 * quarter of an hour before the span ends (so the last can be accounted for), each at a random
 * doorbell; one that comes within 10 s of another ring at its doorbell, near a restart or the
 * half-open cut, or at the offline doorbell around its hour, is drawn again.
 */
function planRings({ rings, doorbells }: WeekShape, spanMs: number, cases: CaseRings, random: () => number): Ring[] {
  const fromMs = 2 * MINUTE_MS;
  const toMs = spanMs - 15 * MINUTE_MS;
  const byDoorbell: number[][] = Array.from({ length: doorbells }, () => []);
  const planned: Ring[] = [];
  for (const ring of cases.rings) {
    byDoorbell[ring.doorbell].push(ring.atMs);
    planned.push(ring);
  }
  const free = ({ atMs, doorbell }: Ring): boolean =>
    cases.clear.every((span) => atMs < span.fromMs || atMs > span.toMs || (span.doorbell !== undefined && span.doorbell !== doorbell));
  for (let attempts = 0; planned.length < rings; attempts += 1) {
    if (attempts > 20 * rings) {
      throw new Error(`${rings} rings do not fit ${RING_SPACING_MS / 1000} s apart`);
    }
    const ring = { atMs: Math.round(fromMs + (toMs - fromMs) * random()), doorbell: Math.floor(random() * doorbells) };
    if (free(ring) && byDoorbell[ring.doorbell].every((atMs) => Math.abs(atMs - ring.atMs) >= RING_SPACING_MS)) {
      byDoorbell[ring.doorbell].push(ring.atMs);
      planned.push(ring);
    }
  }
  return planned.sort((a, b) => a.atMs - b.atMs);
}

/** Restarts spread over the span, hours apart and an hour away from the cuts, the web page and Homebridge's restarts, each back within 5 to 30 s. */
function planRestarts(count: number, spanMs: number, faults: ReadonlyArray<{ atMs: number; forMs: number }>, random: () => number): WeekPlan['relayRestarts'] {
  const restarts: WeekPlan['relayRestarts'] = [];
  const clear = (atMs: number): boolean =>
    faults.every((fault) => Math.abs(atMs - (fault.atMs + fault.forMs / 2)) > fault.forMs / 2 + HOUR_MS) &&
    restarts.every((restart) => Math.abs(restart.atMs - atMs) > 2 * HOUR_MS);
  for (let attempts = 0; restarts.length < count; attempts += 1) {
    if (attempts > 1_000) {
      throw new Error(`${count} relay restarts do not fit the span`);
    }
    const atMs = Math.round(HOUR_MS + (spanMs - 2 * HOUR_MS) * random());
    if (clear(atMs)) {
      restarts.push({ atMs, downMs: Math.round(5_000 + 25_000 * random()) });
    }
  }
  return restarts.sort((a, b) => a.atMs - b.atMs);
}
