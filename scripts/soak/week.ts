/**
 * The simulated week: the platform launched against the simulated services and the loopback relay,
 * then the week's plan played out on the simulated clock (rings, relay restarts, the home cut off for
 * half an hour and on a half-open stream for 2.5 minutes, a web page in the relay's place, the service
 * down, the session expired and signed in again, the host's clock jumping, a full disk, Homebridge
 * restarted and killed, a battery running low, a doorbell offline for an hour) until it has run its days and its refreshes, and what the plugin showed of it
 * all accounted for. Two accounts share the platform: the session that expires is the home's, and the
 * cabin's doorbells ring while it is, every ring of theirs to be shown and none of them in fault.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCHEDULE_TIMING } from '../../src/connection/schedule.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { openStatusFile } from '../../src/status/delivery-status.js';
import { DOORBELLS } from '../lib/platform-harness.js';
import { actsForHome, Cloud, EXPIRING_LABEL, OTHER_ACCOUNT } from './cloud.js';
import { outageFigures, type SeenOutage } from './outages.js';
import { PluginLog, type LogLine } from './plugin-log.js';
import { PluginUnderTest } from './plugin-under-test.js';
import { RelayDowns } from './relay-downs.js';
import { held } from './resources.js';
import type { RecordedRequest } from '../../simulator/index.js';
import type { SoakResults } from './results.js';
import { RingDelivery } from './ring-delivery.js';
import { RingLedger } from './ring-ledger.js';
import { ServiceWatch } from './service-watch.js';
import type { SimulatedTime } from './simulated-time.js';
import { Timeline } from './timeline.js';
import { CASE_CLEARANCE_MS, DAY_MS, HALF_OPEN_RING_AFTER_MS, HOMEBRIDGE_DOWN_MS, type WeekPlan } from './week-plan.js';

const MINUTE_MS = 60_000;
/** The loop looks at its plan at least this often, so an event planned while time runs is not overrun. */
const LOOK_AGAIN_MS = MINUTE_MS;
/** Past its days and refreshes, the week ends once this much quiet time has passed. */
const TAIL_MS = 5 * MINUTE_MS;
/**
 * The week gives up on its refreshes this long after its days: each launch after a restart, and the
 * sign-in after the expiry, put the 12-hour refresh off by up to 12 hours.
 */
const GIVE_UP_AFTER_DAYS_MS = 3 * DAY_MS;
/** Motion alerts before the figures after the launch are taken, this far apart: a quarter of an hour. */
const WARM_UP_MOTIONS = 30;
const WARM_UP_SPACING_MS = 30_000;
/** How long the launch, and the return to health at the end, may take. */
const HEALTHY_WITHIN_MS = 15 * MINUTE_MS;
/** The plugin's lines when a battery turns low, and when it is no longer low. */
const LOW_BATTERY_LINE = /^.+'s battery is at \d+ %$/;
const BATTERY_OK_LINE = /^.+'s battery is no longer low \(\d+ %\)$/;
/** A fault that begins or ends at a list read may be set this long after the read was answered. */
const READ_TOLERANCE_MS = 1_000;
/**
 * While the home's session is expired, a cabin doorbell rings this often, the two in turn (each every
 * 4 minutes): the other account's alerts must all arrive meanwhile.
 */
const OTHER_RING_EVERY_MS = 2 * MINUTE_MS;
/** The plugin's warning when the Doorbell Alerts sensor opens. */
const ALERTS_STOPPED = 'Doorbell alerts stopped: ';

export interface WeekReport {
  results: Omit<SoakResults, 'wallSeconds'>;
  outages: SeenOutage[];
  timeline: Timeline;
  /** Warnings and errors of the plugin, by gist, with their counts. */
  problems: ReadonlyMap<string, number>;
  /** Everything else worth a line of the summary. */
  notes: string[];
  /** What went wrong beyond the figures' rules: an error thrown from a timer (a crash in Homebridge), a ring shown twice. */
  failures: string[];
}

export async function runWeek(plan: WeekPlan, time: SimulatedTime): Promise<WeekReport> {
  const storagePath = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'doorbell-motion-soak-'));
  const week = new Week(plan, time, storagePath);
  try {
    return await week.run();
  } finally {
    await rm(storagePath, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }
}

class Week {
  private readonly timeline: Timeline;
  private readonly ledger: RingLedger;
  private readonly watch: ServiceWatch;
  /** Set up by run(): the services around the plugin, and the doorbell service's side of each ring. */
  private cloud!: Cloud;
  private delivery!: RingDelivery;
  private readonly launchAt: number;
  /** When the plan's clock starts: after the launch and the warm-up. */
  private weekStart: number | undefined;
  private readonly notes: string[] = [];
  private scheduledExpiry = false;
  private scheduledOutage = false;
  private plugin!: PluginUnderTest;
  private readonly relayDowns = new RelayDowns();
  /** Rings published while Homebridge was down. */
  private readonly ringsWhileDown = new Set<number>();
  /** Of those, how many the doorbells' buttons showed once it was back. */
  private ringsWhileDownShown = 0;
  /** Presses of each doorbell's button so far. */
  private readonly presses = new Map<string, number>();
  /** When each ring of the plan was published, by its index: a lost one is named in the summary. */
  private readonly rungAt = new Map<number, number>();
  private expiredAt: number | undefined;
  /** When every doorbell of the expired home account was subscribed again with the new session. */
  private resubscribedAt: number | undefined;
  /** The cabin's rings between the home's expiry and its doorbells subscribed again, by ledger index. */
  private readonly otherRingsDuringExpiry: number[] = [];
  /** The cabin's doorbells put in fault meanwhile: its session never expired, so none. */
  private otherFaultsDuringExpiry = 0;
  /** The plugin's warnings that alerts stopped, meanwhile. */
  private readonly expiryWarnings: string[] = [];
  private readonly failures: string[] = [];
  /** The plugin's warnings that a battery is low, and its lines that one is no longer low. */
  private lowBatteryWarnings = 0;
  private batteryOkLines = 0;
  /**
   * The offline doorbell's hour, as the doorbell service and the plugin's list reads see it: when the
   * service was told it is offline, the first list read after that, when it was told it is back, and
   * the first read after that. Rings to it between the first and the last are a broken plan.
   */
  private readonly offlineHour: { setAt?: number; seenAt?: number; backAt?: number; seenBackAt?: number } = {};

  constructor(
    private readonly plan: WeekPlan,
    private readonly time: SimulatedTime,
    private readonly storagePath: string,
  ) {
    this.launchAt = time.now;
    this.timeline = new Timeline(this.launchAt, () => time.now, (atMs) => time.wakeAt(atMs));
    this.ledger = new RingLedger(plan.rings.map(({ doorbell }) => DOORBELLS[doorbell].deviceId));
    this.watch = new ServiceWatch(
      DOORBELLS.map(({ deviceId }) => deviceId),
      SCHEDULE_TIMING.refreshMs,
      () => time.now,
      {
        allSubscribed: (atMs) => this.planAroundRefresh(atMs + SCHEDULE_TIMING.refreshMs),
        sessionRefused: (atMs) => {
          this.timeline.note('the plugin heard 401: the session is refused');
          this.timeline.at(atMs + plan.signInAfterMs, 'signed in again on the settings page', () => this.cloud.signInOnSettingsPage());
        },
      },
    );
  }

  async run(): Promise<WeekReport> {
    const settingsPage = new PluginLog(() => this.time.now);
    this.cloud = await Cloud.start({
      doorbells: DOORBELLS,
      storagePath: this.storagePath,
      now: () => this.time.now,
      // The watch and the offline hour follow the home's account: the cabin's rounds and list reads run beside them.
      onRequest: (request) => {
        if (actsForHome(request)) {
          this.watch.onRequest(request);
          this.onListRead(request);
          if (this.expiredAt !== undefined && this.resubscribedAt === undefined && this.watch.resubscribed) {
            this.resubscribedAt = this.time.now;
            this.timeline.note(`every doorbell of ${EXPIRING_LABEL} subscribed again with the new session`);
          }
        }
      },
      logger: settingsPage.logger,
    });
    const { battery } = this.plan;
    await this.cloud.setDoorbell(DOORBELLS[battery.doorbell].deviceId, { battery_life: battery.healthy });
    this.delivery = new RingDelivery(this.cloud, this.ledger, this.watch, this.timeline, () => this.time.now);
    const plugin = PluginUnderTest.launch({
      cloud: this.cloud,
      doorbells: [...DOORBELLS, ...OTHER_ACCOUNT.doorbells],
      storagePath: this.storagePath,
      ledger: this.ledger,
      time: this.time,
      onLaunch: () => this.relayDowns.up(this.time.now),
      onLogLine: (line) => this.onLogLine(line),
      onRing: (deviceId) => this.presses.set(deviceId, (this.presses.get(deviceId) ?? 0) + 1),
      onFault: (deviceId, fault) => {
        if (fault === 1 && this.duringExpiry() && OTHER_ACCOUNT.doorbells.some((doorbell) => doorbell.deviceId === deviceId)) {
          this.otherFaultsDuringExpiry += 1;
          this.timeline.note(`${deviceId} of ${OTHER_ACCOUNT.label} in fault while ${EXPIRING_LABEL}'s session is expired`);
        }
      },
    });
    this.plugin = plugin;
    try {
      await this.advanceUntil(() => plugin.allConfirmed(), 'the launch');
      await this.warmUp();
      this.cloud.quiesce();
      const afterLaunch = await held(this.time);
      this.weekStart = this.time.now;
      this.planFixedEvents(this.weekStart);
      await this.playOut(this.weekStart);
      await this.advanceUntil(() => plugin.allConfirmed() && this.delivery.pending === 0, 'alerts flowing at the end of the week');
      const endAt = this.time.now;
      this.cloud.quiesce();
      const afterWeek = await held(this.time);
      const record = plugin.sensor.record();
      const { figures, outages } = outageFigures(record, endAt, this.relayDowns.record());
      // Homebridge's shutdown writes status.json a last time: its outages, with their late rings.
      plugin.shutdown();
      await this.time.runUntil(this.time.now + 5_000);
      const late = await this.lateRings(settingsPage);
      this.notes.push(
        `status.json writes refused for a full disk: ${this.cloud.disk.refused}`,
        `settles cut short with real work under way: ${this.time.slowSettles}`,
      );
      const failures = [
        ...this.failures,
        ...this.time.timerErrors.map((error) => `a timer threw, which would end Homebridge: ${String(error)}`),
        ...(this.ledger.unexplained > 0 ? [`${this.ledger.unexplained} button events or stale drops no ring explains (a ring shown twice?)`] : []),
        ...(this.batteryOkLines === 1 ? [] : [`${this.batteryOkLines} lines that the battery is no longer low, for one battery replaced`]),
      ];
      const { sent, delivered, caughtUp, stale, afterExpiry, lost } = this.ledger.counts();
      const lostRings = this.ledger.rings.filter(({ outcome }) => outcome === undefined || outcome === 'lost');
      if (lostRings.length > 0) {
        const when = ({ index, deviceId }: { index: number; deviceId: string }): string => `${this.timeline.when(this.rungAt.get(index) ?? endAt)} at ${deviceId}${this.ringsWhileDown.has(index) ? ' (Homebridge down)' : ''}`;
        this.notes.push(`rings lost, rung ${lostRings.slice(0, 10).map(when).join('; ')}${lostRings.length > 10 ? '...' : ''}`);
      }
      const opening = this.expiredAt === undefined ? undefined : record.open.find(({ fromMs }) => fromMs >= this.expiredAt!);
      return {
        results: {
          simulatedDays: Math.round(((endAt - this.launchAt) / DAY_MS) * 100) / 100,
          refreshes: this.watch.refreshes.length,
          homebridgeRestarts: plugin.relaunches,
          ringsDuringRestart: this.ringsWhileDown.size,
          ringsDuringRestartDelivered: this.ringsWhileDownShown,
          expiryToSensorMaxMinutes: opening === undefined ? null : Math.round((opening.fromMs - this.expiredAt!) / 6_000) / 10,
          lowBatteryWarnings: this.lowBatteryWarnings,
          offlineOutages: this.offlineOutages(outages),
          accounts: {
            otherRingsDuringExpiry: this.otherRingsDuringExpiry.length,
            otherRingsDuringExpiryDelivered: this.otherRingsDuringExpiry.filter((index) => this.ledger.rings[index].outcome === 'delivered').length,
            otherFaultsDuringExpiry: this.otherFaultsDuringExpiry,
            expiryWarnings: this.expiryWarnings.length,
            expiryWarningsNamingAccount: this.expiryWarnings.filter((message) => message.includes(`the session of ${EXPIRING_LABEL} expired`) && !message.includes(OTHER_ACCOUNT.label)).length,
          },
          alerts: { sent, delivered, caughtUp, stale, late, afterExpiry, lost },
          outages: figures,
          resources: {
            handlesAfterLaunch: afterLaunch.handles,
            handlesAfterWeek: afterWeek.handles,
            heapDeltaMiB: Math.round(((afterWeek.heapBytes - afterLaunch.heapBytes) / 2 ** 20) * 100) / 100,
          },
        },
        outages,
        timeline: this.timeline,
        problems: plugin.log.problems,
        notes: this.notes,
        failures,
      };
    } finally {
      plugin.shutdown();
      await this.time.runUntil(this.time.now + 5_000);
      await this.cloud.close();
    }
  }

  /**
   * Before the figures after the launch are taken, motion at every doorbell for a while: V8 keeps type
   * feedback for each function once it has run often enough, which the path every alert takes would
   * otherwise add to the heap early in the week, as growth that is no leak. Motion, not rings: the
   * week's rings are counted from the doorbell buttons alone.
   */
  private async warmUp(): Promise<void> {
    for (let motion = 0; motion < WARM_UP_MOTIONS; motion += 1) {
      await this.cloud.deliver(DOORBELLS[motion % DOORBELLS.length].deviceId, `soak-warm-up-${motion + 1}`, 'motion');
      await this.time.runUntil(this.time.now + WARM_UP_SPACING_MS);
    }
  }

  /**
   * The rings of `status.json`'s outages that came too late to show, added up: read as the plugin's
   * own reader reads the file. A `late` count is what a version of the plugin that counts them writes.
   */
  private async lateRings(log: PluginLog): Promise<number> {
    const status = await openStatusFile(openDataFolder(this.storagePath, log.logger), log.logger).read();
    const outages: readonly object[] = status?.outages ?? [];
    return outages.reduce((sum, outage) => {
      const { late } = outage as { late?: unknown };
      return sum + (typeof late === 'number' ? late : 0);
    }, 0);
  }

  /**
   * The rings published while Homebridge was down, and shown once it is back: no other ring comes for
   * minutes around a restart, so each press in those minutes is one of them (as many as rang at that
   * doorbell, at most). Which ring a press shows, HomeKit does not say; the ledger counts by order.
   */
  private countShownAfterRestart(): void {
    const waiting = [...this.ringsWhileDown].filter((index) => (this.rungAt.get(index) ?? 0) > this.time.now - HOMEBRIDGE_DOWN_MS).map((index) => this.ledger.rings[index].deviceId);
    const before = new Map(this.presses);
    this.timeline.at(this.time.now + CASE_CLEARANCE_MS - MINUTE_MS, undefined, () => {
      for (const deviceId of new Set(waiting)) {
        const pressed = (this.presses.get(deviceId) ?? 0) - (before.get(deviceId) ?? 0);
        this.ringsWhileDownShown += Math.min(pressed, waiting.filter((each) => each === deviceId).length);
      }
    });
  }

  /** Every line the plugin logs: the relay stream opening, and a battery turning low or no longer low. */
  private onLogLine({ level, message }: LogLine): void {
    if (level === 'info' && message.startsWith('push relay connected: ')) {
      this.relayDowns.up(this.time.now);
    } else if (level === 'warn' && LOW_BATTERY_LINE.test(message)) {
      this.lowBatteryWarnings += 1;
    } else if (level === 'info' && BATTERY_OK_LINE.test(message)) {
      this.batteryOkLines += 1;
    } else if (level === 'warn' && message.startsWith(ALERTS_STOPPED) && this.duringExpiry()) {
      this.expiryWarnings.push(message);
    }
  }

  /** From the home's session expiring to its doorbells subscribed again with the new one. */
  private duringExpiry(): boolean {
    return this.expiredAt !== undefined && this.resubscribedAt === undefined;
  }

  /**
   * While the home's session is expired, the cabin's doorbells ring in turn until the home's are
   * subscribed again: the other account's alerts must keep arriving, every one.
   */
  private ringOtherAccount(turn: number): void {
    this.timeline.at(this.time.now + OTHER_RING_EVERY_MS, undefined, () => {
      if (!this.duringExpiry()) {
        return undefined;
      }
      const { deviceId } = OTHER_ACCOUNT.doorbells[turn % OTHER_ACCOUNT.doorbells.length];
      const { index } = this.ledger.add(deviceId);
      this.otherRingsDuringExpiry.push(index);
      this.ringOtherAccount(turn + 1);
      return this.ring(index);
    });
  }

  /** The first doorbell list reads after the offline doorbell went offline, and after it came back. */
  private onListRead({ route, status }: RecordedRequest): void {
    if (route !== 'devices' || status !== 200) {
      return;
    }
    const hour = this.offlineHour;
    if (hour.setAt !== undefined && hour.seenAt === undefined) {
      hour.seenAt = this.time.now;
      this.timeline.note('the doorbell list read finds the doorbell offline');
    } else if (hour.backAt !== undefined && hour.seenBackAt === undefined) {
      hour.seenBackAt = this.time.now;
      this.timeline.note('the doorbell list read finds the doorbell online again');
    }
  }

  /**
   * The outages that are the offline hour: from the list read that found the doorbell offline to the
   * one that found it back, the sensor open until that end. 1 when the plugin showed the hour as it is to.
   */
  private offlineOutages(outages: readonly SeenOutage[]): number {
    const { seenAt, seenBackAt } = this.offlineHour;
    if (seenAt === undefined || seenBackAt === undefined) {
      return 0;
    }
    const near = (atMs: number | undefined, readAt: number): boolean => atMs !== undefined && atMs >= readAt && atMs - readAt <= READ_TOLERANCE_MS;
    return outages.filter(
      ({ period, opening }) => near(period.fromMs, seenAt) && near(period.toMs, seenBackAt) && opening !== undefined && opening.toMs !== undefined && opening.toMs >= period.toMs!,
    ).length;
  }

  /** A ring of the plan is published now; one while Homebridge is down is counted apart. */
  private ring(index: number): Promise<void> {
    if (this.plugin.down) {
      this.ringsWhileDown.add(index);
    }
    const { deviceId } = this.ledger.rings[index];
    const { setAt, seenBackAt } = this.offlineHour;
    if (deviceId === DOORBELLS[this.plan.offline.doorbell].deviceId && setAt !== undefined && seenBackAt === undefined) {
      this.failures.push(`a ring was sent to ${deviceId} at ${this.timeline.when(this.time.now)}, while the doorbell service could not reach it`);
    }
    this.rungAt.set(index, this.time.now);
    return this.delivery.ring(this.ledger.rings[index]);
  }

  /** The events whose time the plan fixes; those around a refresh are planned once it is due. */
  private planFixedEvents(weekStart: number): void {
    const { plan, timeline, cloud, relayDowns } = this;
    const at = (offsetMs: number): number => weekStart + offsetMs;
    plan.rings.forEach(({ atMs, afterKeepalive }, index) => afterKeepalive !== true && timeline.at(at(atMs), undefined, () => this.ring(index)));
    for (const { atMs, downMs } of plan.relayRestarts) {
      timeline.at(at(atMs), `relay stopped for ${Math.round(downMs / 1000)} s`, () => {
        relayDowns.down(this.time.now);
        return cloud.relay.stop();
      });
      timeline.at(at(atMs + downMs), 'relay started again, its cache kept', () => cloud.relay.start());
    }
    timeline.at(at(plan.homeCut.atMs), `home cut off from the relay for ${plan.homeCut.forMs / MINUTE_MS} minutes`, () => relayDowns.down(cloud.home.cutOff()));
    timeline.at(at(plan.homeCut.atMs + plan.homeCut.forMs), 'home reaches the relay again', () => cloud.home.restore());
    this.planHalfOpenCut(at(plan.halfOpenCut.atMs));
    for (const { atMs, abrupt } of plan.homebridgeRestarts) {
      timeline.at(at(atMs), abrupt ? `Homebridge killed: no shutdown, down for ${HOMEBRIDGE_DOWN_MS / 1000} s` : `Homebridge restarting: down for ${HOMEBRIDGE_DOWN_MS / 1000} s`, () =>
        abrupt ? this.plugin.kill() : this.plugin.stop(),
      );
      timeline.at(at(atMs + HOMEBRIDGE_DOWN_MS), 'Homebridge launched again', () => {
        const left = this.plugin.relaunch();
        if (left > 0) {
          this.failures.push(`${left} timers or sockets of the platform still held ${HOMEBRIDGE_DOWN_MS / 1000} s after its shutdown`);
        }
        this.countShownAfterRestart();
      });
    }
    timeline.at(at(plan.webPage.atMs), `a web page answers in the relay's place for ${plan.webPage.forMs / MINUTE_MS} minutes`, () => {
      relayDowns.down(this.time.now);
      cloud.webPageInstead(true);
    });
    timeline.at(at(plan.webPage.atMs + plan.webPage.forMs), 'the relay answers again', () => cloud.webPageInstead(false));
    const { forwardAtMs, backAtMs, jumpMs } = plan.hostClock;
    timeline.at(at(forwardAtMs), `host clock jumps ${jumpMs / MINUTE_MS} minutes forward`, () => this.time.jumpHostClock(jumpMs));
    timeline.at(at(backAtMs), `host clock jumps ${jumpMs / MINUTE_MS} minutes back`, () => this.time.jumpHostClock(-jumpMs));
    timeline.at(at(plan.diskFull.atMs), 'disk full: status.json writes fail with ENOSPC', () => {
      cloud.disk.full = true;
    });
    timeline.at(at(plan.diskFull.atMs + plan.diskFull.forMs), 'disk has space again', () => {
      cloud.disk.full = false;
    });
    this.planHealth(at);
  }

  /** The battery running low and replaced, and the doorbell offline for an hour, through the simulator's control API. */
  private planHealth(at: (offsetMs: number) => number): void {
    const { plan, timeline, cloud } = this;
    const { battery, offline } = plan;
    const batteryId = DOORBELLS[battery.doorbell].deviceId;
    timeline.at(at(battery.lowAtMs), `${batteryId}'s battery drops from ${battery.healthy} % to ${battery.low} %`, () => cloud.setDoorbell(batteryId, { battery_life: battery.low }));
    timeline.at(at(battery.replacedAtMs), `${batteryId}'s battery replaced: ${battery.replaced} %`, () => cloud.setDoorbell(batteryId, { battery_life: battery.replaced }));
    const offlineId = DOORBELLS[offline.doorbell].deviceId;
    timeline.at(at(offline.atMs), `${offlineId} offline in the doorbell service for ${offline.forMs / MINUTE_MS} minutes`, async () => {
      this.offlineHour.setAt = this.time.now;
      await cloud.setDoorbell(offlineId, { connection: 'offline' });
    });
    timeline.at(at(offline.atMs + offline.forMs), `${offlineId} online again in the doorbell service`, async () => {
      this.offlineHour.backAt = this.time.now;
      await cloud.setDoorbell(offlineId, { connection: 'online' });
    });
  }

  /**
   * The half-open cut: from `armAt`, the home is cut off right after the next keepalive reaches it (the
   * relay's come every 45 s), so that the stream goes silent without closing; a ring 5 s after that
   * keepalive, and the home back 2.5 minutes after it. The ring is always stale when it comes back.
   */
  private planHalfOpenCut(armAt: number): void {
    const { plan, timeline, cloud } = this;
    const ringIndex = plan.rings.findIndex(({ afterKeepalive }) => afterKeepalive === true);
    const { forMs } = plan.halfOpenCut;
    timeline.at(armAt, undefined, () =>
      cloud.home.cutAfterKeepalive((keepaliveAt) => {
        timeline.note(`home cut off right after a keepalive for ${forMs / 1000} s: the stream half-open`);
        this.relayDowns.down(keepaliveAt);
        timeline.at(keepaliveAt + HALF_OPEN_RING_AFTER_MS, undefined, () => this.ring(ringIndex));
        timeline.at(keepaliveAt + forMs, 'home reaches the relay again', () => cloud.home.restore());
      }),
    );
  }

  /** A refresh is due at `dueAt`: the session expiry and the service outage are placed around the first due late enough. */
  private planAroundRefresh(dueAt: number): void {
    const { sessionExpiry, serviceUnavailable } = this.plan;
    if (this.weekStart === undefined) {
      return;
    }
    if (!this.scheduledExpiry && dueAt - this.weekStart >= sessionExpiry.beforeRefreshAfterMs) {
      this.scheduledExpiry = true;
      this.timeline.at(dueAt - sessionExpiry.expiryLeadMs, `session of ${EXPIRING_LABEL} expires: 401 on every call with it; ${OTHER_ACCOUNT.label}'s keeps working`, () => {
        this.expiredAt = this.time.now;
        this.cloud.expireSession();
        this.watch.sessionExpired();
        this.ringOtherAccount(0);
      });
    } else if (!this.scheduledOutage && dueAt - this.weekStart >= serviceUnavailable.aroundRefreshAfterMs) {
      this.scheduledOutage = true;
      const from = dueAt - serviceUnavailable.leadMs;
      this.timeline.at(from, `doorbell service answers 503 for ${serviceUnavailable.forMs / MINUTE_MS / 60} hours`, () => this.cloud.serviceUnavailable(true));
      this.timeline.at(from + serviceUnavailable.forMs, 'doorbell service answers again', () => this.cloud.serviceUnavailable(false));
    }
  }

  /** Plays the plan out until its days and its refreshes are done. */
  private async playOut(weekStart: number): Promise<void> {
    const { plan, time, timeline, watch } = this;
    const daysEnd = weekStart + plan.days * DAY_MS;
    const giveUpAt = daysEnd + GIVE_UP_AFTER_DAYS_MS;
    const endAt = (): number => Math.max(daysEnd, (watch.refreshes[plan.refreshes - 1] ?? giveUpAt) + TAIL_MS);
    while (time.now < Math.min(endAt(), giveUpAt)) {
      await time.runUntil(Math.min(timeline.nextAt(), time.now + LOOK_AGAIN_MS, endAt(), giveUpAt));
      await timeline.runDue();
    }
  }

  /** Runs simulated time until `condition` holds; rejects when it has not within HEALTHY_WITHIN_MS. */
  private async advanceUntil(condition: () => boolean, what: string): Promise<void> {
    const deadline = this.time.now + HEALTHY_WITHIN_MS;
    while (!condition()) {
      if (this.time.now >= deadline) {
        throw new Error(`${what} did not happen within ${HEALTHY_WITHIN_MS / MINUTE_MS} simulated minutes`);
      }
      await this.time.runUntil(this.time.now + 1_000);
      await this.timeline.runDue();
    }
  }
}
