/**
 * The alerts folder: the rule that opens the Doorbell Alerts sensor, then the reasons it gives.
 *
 * The rule of the Doorbell Alerts sensor on a clock the test moves: alerts stop once something has
 * been down for a minute without a break, and flow again the moment nothing is down; one warning per
 * stop, one info line per recovery; nothing is decided before the last run's record is restored, and
 * an outage that outlived a restart stays one outage; at most 20 outages are kept, newest first.
 */
import { describe, expect, it } from '@jest/globals';
import { ALERTS_OPEN_AFTER_MS, AlertsRule, type AlertsClock } from '../../src/alerts/alerts-rule.js';
import type { AlertsRecord, Outage } from '../../src/status/delivery-status.js';
import { DownReasons, CONFIGURATION_INVALID, NODE_TOO_OLD, NOT_CONFIGURED, type ReasonSettings } from '../../src/alerts/reasons.js';
import { CloudError } from '../../src/cloud/errors.js';
import type { SessionLoss } from '../../src/connection/progress.js';
import { createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';

const START = Date.parse('2026-03-01T10:00:00.000Z');
const MINUTE = ALERTS_OPEN_AFTER_MS;

/** Monotonic time from 0, the wall clock from START; timers fire as the test moves time on. */
class TestClock implements AlertsClock {
  private elapsed = 0;
  private readonly timers = new Set<{ at: number; action: () => void }>();
  /** Added to the wall clock only, as when the system clock is set. */
  wallStep = 0;

  monotonic(): number {
    return this.elapsed;
  }

  wall(): number {
    return START + this.elapsed + this.wallStep;
  }

  after(ms: number, action: () => void): () => void {
    const timer = { at: this.elapsed + ms, action };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  get pending(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const end = this.elapsed + ms;
    for (;;) {
      const next = [...this.timers].filter(({ at }) => at <= end).sort((a, b) => a.at - b.at)[0];
      if (next === undefined) {
        break;
      }
      this.timers.delete(next);
      this.elapsed = next.at;
      next.action();
    }
    this.elapsed = end;
  }
}

interface Run {
  rule: AlertsRule;
  clock: TestClock;
  log: TestLogger;
  /** Every state the rule showed, true for open. */
  shown: boolean[];
}

function startRule(down: readonly string[], clock = new TestClock()): Run {
  const log = createTestLogger();
  const shown: boolean[] = [];
  const rule = new AlertsRule({
    down,
    describe: (keys) => ({ words: `${keys.join(' and ')} down`, todo: 'Do something.' }),
    log,
    onShow: (open) => shown.push(open),
    onChange: () => undefined,
    clock,
  });
  return { rule, clock, log, shown };
}

const said = ({ log }: Run) => log.lines.filter(({ level }) => level !== 'debug').map(({ level, message }) => `${level}: ${message}`);

describe('deciding', () => {
  it('closes the moment every doorbell is confirmed, and says nothing', () => {
    const run = startRule(['1', '2']);
    run.rule.restore(undefined);
    run.clock.advance(5_000);
    run.rule.setDown('1', false);
    expect(run.shown).toEqual([]);
    run.rule.setDown('2', false);

    expect(run.shown).toEqual([false]);
    expect(said(run)).toEqual([]);
    expect(run.clock.pending).toBe(0);
  });

  it('opens once a doorbell has been down a minute without a break, not before, with one warning', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.clock.advance(MINUTE - 1);
    expect(run.shown).toEqual([]);
    run.clock.advance(1);

    expect(run.shown).toEqual([true]);
    expect(said(run)).toEqual(['warn: Doorbell alerts stopped: 1 down. Do something.']);
    run.clock.advance(10 * MINUTE);
    expect(said(run)).toHaveLength(1);
  });

  it('counts the minute anew after every break: shorter down periods never open it', () => {
    const run = startRule(['1', '2']);
    run.rule.restore(undefined);
    run.rule.setDown('1', false);
    run.rule.setDown('2', false);
    for (let i = 0; i < 5; i += 1) {
      run.rule.setDown('1', true);
      run.clock.advance(MINUTE - 1_000);
      run.rule.setDown('1', false);
      run.rule.setDown('2', true);
      run.clock.advance(MINUTE - 1_000);
      run.rule.setDown('2', false);
    }

    expect(run.shown.every((open) => !open)).toBe(true);
    expect(said(run)).toEqual([]);
  });

  it('stays open while anything is down, and closes the moment nothing is, saying for how long and why', () => {
    const run = startRule(['1', '2']);
    run.rule.restore(undefined);
    run.clock.advance(MINUTE);
    run.rule.setDown('1', false);
    run.clock.advance(13 * MINUTE);
    expect(run.shown).toEqual([true]);
    run.rule.setDown('2', false);

    expect(run.shown).toEqual([true, false]);
    expect(said(run)).toEqual(['warn: Doorbell alerts stopped: 1 and 2 down. Do something.', 'info: Doorbell alerts are flowing again after 14 min (1 and 2 down)']);
  });

  it('measures on the monotonic clock: a system clock set an hour forward neither opens it nor lengthens the outage', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.clock.advance(30_000);
    run.clock.wallStep = 60 * MINUTE;
    run.rule.setDown('1', false);
    expect(run.shown).toEqual([false]);

    run.rule.setDown('1', true);
    run.clock.advance(MINUTE);
    run.clock.wallStep = 0;
    run.clock.advance(30_000);
    run.rule.setDown('1', false);
    expect(said(run)[1]).toBe('info: Doorbell alerts are flowing again after 90 s (1 down)');
  });

  it('decides nothing before the last record is restored, then decides at once', () => {
    const run = startRule(['1']);
    run.clock.advance(2 * MINUTE);
    run.rule.setDown('1', false);
    run.rule.setDown('1', true);
    expect(run.shown).toEqual([]);
    run.clock.advance(MINUTE);
    run.rule.restore(undefined);

    expect(run.shown).toEqual([true]);
  });

  it('leaves no timer behind once disposed', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.rule.dispose();
    run.clock.advance(2 * MINUTE);

    expect(run.clock.pending).toBe(0);
    expect(run.shown).toEqual([]);
  });
});

describe('the record for status.json', () => {
  const iso = (ms: number) => new Date(ms).toISOString();

  it('holds the outage from the moment the down period began, and its end', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.clock.advance(MINUTE);
    expect(run.rule.record()).toEqual({
      alerts: { flowing: false, since: iso(START), reason: '1 down' },
      outages: [{ from: iso(START), to: null, reason: '1 down', late: 0 }],
    });
    run.clock.advance(MINUTE);
    run.rule.setDown('1', false);

    expect(run.rule.record()).toEqual({
      alerts: { flowing: true, since: iso(START + 2 * MINUTE), reason: null },
      outages: [{ from: iso(START), to: iso(START + 2 * MINUTE), reason: '1 down', late: 0 }],
    });
  });

  it('keeps an outage still open at the restart as one outage: told once more if it goes on, ended when alerts flow', () => {
    const from = iso(START - 10 * MINUTE);
    const previous: AlertsRecord = { alerts: { flowing: false, since: from, reason: 'the relay' }, outages: [{ from, to: null, reason: 'the relay' }] };
    const run = startRule(['1']);
    run.rule.restore(previous);
    run.clock.advance(MINUTE);
    expect(run.shown).toEqual([true]);
    expect(run.rule.record()).toEqual(previous);
    run.clock.advance(4 * MINUTE);
    run.rule.setDown('1', false);

    expect(said(run)).toEqual(['warn: Doorbell alerts stopped: 1 down. Do something.', 'info: Doorbell alerts are flowing again after 15 min (the relay)']);
    expect(run.rule.record().outages).toEqual([{ from, to: iso(START + 5 * MINUTE), reason: 'the relay' }]);
  });

  it('closes an outage still open at the restart once every doorbell is confirmed in time, with one info line', () => {
    const from = iso(START - 3 * MINUTE);
    const run = startRule(['1']);
    run.rule.restore({ alerts: { flowing: false, since: from, reason: 'signed out' }, outages: [{ from, to: null, reason: 'signed out' }] });
    run.clock.advance(10_000);
    run.rule.setDown('1', false);

    expect(run.shown).toEqual([false]);
    expect(said(run)).toEqual(['info: Doorbell alerts are flowing again after 3 min (signed out)']);
  });

  it('keeps the 20 newest outages, newest first', () => {
    const old: Outage[] = Array.from({ length: 20 }, (_, index) => ({ from: iso(START - (index + 2) * 60 * MINUTE), to: iso(START - (index + 1) * 60 * MINUTE), reason: `old ${index}` }));
    const run = startRule(['1']);
    run.rule.restore({ alerts: { flowing: true, since: old[0].to as string, reason: null }, outages: old });
    run.clock.advance(MINUTE);

    const { outages } = run.rule.record();
    expect(outages).toHaveLength(20);
    expect(outages[0]).toEqual({ from: iso(START), to: null, reason: '1 down', late: 0 });
    expect(outages.slice(1)).toEqual(old.slice(0, 19));
  });
});

describe('a fault dated before it was found', () => {
  const iso = (ms: number) => new Date(ms).toISOString();

  it('counts the minute from the date it is given, not from when it was told, and dates the outage from it', () => {
    const run = startRule([]);
    run.rule.restore(undefined);
    run.clock.advance(100_000);
    // A relay stream found silent at 100 s, its last sign of life at 0: its fault is dated 60 s.
    run.rule.setDown('1', true, 60_000);
    run.clock.advance(20_000 - 1);
    expect(run.shown).toEqual([false]);
    run.clock.advance(1);

    expect(run.shown).toEqual([false, true]);
    expect(run.rule.record().outages).toEqual([{ from: iso(START + 60_000), to: null, reason: '1 down', late: 0 }]);
  });

  it('opens at once when its date is a minute ago or more, and never counts from the future', () => {
    const run = startRule([]);
    run.rule.restore(undefined);
    run.clock.advance(3 * MINUTE);
    run.rule.setDown('1', true, MINUTE);
    expect(run.shown).toEqual([false, true]);

    run.rule.setDown('1', false);
    run.rule.setDown('2', true, 10 * MINUTE);
    run.clock.advance(MINUTE - 1);
    expect(run.shown).toEqual([false, true, false]);
    run.clock.advance(1);
    expect(run.shown).toEqual([false, true, false, true]);
  });

  it('goes before keys that went down after its date: the longest down gives the outage its start and its reason', () => {
    const run = startRule([]);
    run.rule.restore(undefined);
    run.clock.advance(50_000);
    run.rule.setDown('late', true);
    run.clock.advance(50_000);
    run.rule.setDown('early', true, 20_000);
    run.clock.advance(40_000);

    expect(run.shown).toEqual([false, true]);
    expect(run.rule.record().outages).toEqual([{ from: iso(START + 20_000), to: null, reason: 'early and late down', late: 0 }]);
  });
});

describe('alerts that came too late to show', () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  const tooLate = (run: Run) => said(run).filter((line) => line.includes('came too late'));

  it('counts the stale drops of the catch-up after a reconnect in the outage that reconnect ended, with no further warning', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.clock.advance(2 * MINUTE);
    run.rule.relayBack();
    run.rule.setDown('1', false);
    run.rule.catchUpBegins();
    run.rule.late(150_000);
    run.rule.late(140_000);

    expect(run.rule.record().outages).toEqual([{ from: iso(START), to: iso(START + 2 * MINUTE), reason: '1 down', late: 2 }]);
    expect(said(run)).toEqual(['warn: Doorbell alerts stopped: 1 down. Do something.', 'info: Doorbell alerts are flowing again after 2 min (1 down)']);
  });

  it('makes the stale drops of one catch-up one outage of their own when alerts never stopped, from the oldest one, with one warning', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.rule.setDown('1', false);
    run.clock.advance(10 * MINUTE);
    run.rule.catchUpBegins();
    run.rule.late(200_000);
    run.clock.advance(1_000);
    run.rule.late(300_000);
    run.rule.late(250_000);
    const at = START + 10 * MINUTE;

    expect(run.rule.record().outages).toEqual([{ from: iso(at + 1_000 - 300_000), to: iso(at + 1_000), reason: 'alerts came too late to show', late: 3 }]);
    expect(tooLate(run)).toEqual([
      "warn: Doorbell alerts came too late to show: one sent 3 min ago reached this Homebridge only when the push relay stream came back. Check this Homebridge's internet connection if it happens again.",
    ]);
    expect(run.shown).toEqual([false]);

    run.rule.catchUpBegins();
    run.rule.late(130_000);
    expect(run.rule.record().outages.map(({ late }) => late)).toEqual([1, 3]);
    expect(tooLate(run)).toHaveLength(2);
  });

  it('counts them in the outage under way while alerts are still stopped, and keeps them when the history is read later', () => {
    const run = startRule(['1']);
    run.rule.catchUpBegins();
    run.rule.late(200_000);
    run.rule.restore({ alerts: { flowing: true, since: iso(START - MINUTE), reason: null }, outages: [{ from: iso(START - 2 * MINUTE), to: iso(START - MINUTE), reason: 'old' }] });
    expect(run.rule.record().outages.map(({ reason, late }) => [reason, late])).toEqual([
      ['alerts came too late to show', 1],
      ['old', undefined],
    ]);
    run.clock.advance(MINUTE);
    run.rule.catchUpBegins();
    run.rule.late(200_000);

    expect(run.rule.record().outages.map(({ reason, late }) => [reason, late])).toEqual([
      ['1 down', 1],
      ['alerts came too late to show', 1],
      ['old', undefined],
    ]);
  });
});

/**
 * status.json could not be read at launch: the rule runs without a history meanwhile, and the history
 * joins it once read. The sensor never changes for it; an outage under way at the last shutdown stays
 * one outage when this run's first decision kept alerts stopped, and ends at that decision otherwise.
 */
describe('a history read after the rule began deciding', () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  const from = iso(START - 10 * MINUTE);
  const older: Outage = { from: iso(START - 60 * MINUTE), to: iso(START - 50 * MINUTE), reason: 'older' };
  /** Alerts had stopped at the last shutdown, for 'the relay', and once before. */
  const stoppedAtShutdown: AlertsRecord = { alerts: { flowing: false, since: from, reason: 'the relay' }, outages: [{ from, to: null, reason: 'the relay' }, older] };

  it('ends the outage under way at the last shutdown when this run first closed the sensor, and changes nothing it shows', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.clock.advance(10_000);
    run.rule.setDown('1', false);
    run.clock.advance(10_000);
    run.rule.restore(stoppedAtShutdown);

    expect(run.shown).toEqual([false]);
    expect(said(run)).toEqual([]);
    expect(run.rule.record()).toEqual({
      alerts: { flowing: true, since: iso(START + 10_000), reason: null },
      outages: [{ from, to: iso(START + 10_000), reason: 'the relay' }, older],
    });
  });

  it('keeps it one outage when this run first opened the sensor: the earlier start and reason, ended when alerts flow', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.clock.advance(MINUTE);
    run.clock.advance(10_000);
    run.rule.restore(stoppedAtShutdown);
    expect(run.shown).toEqual([true]);
    expect(run.rule.record()).toEqual({ ...stoppedAtShutdown, outages: [{ from, to: null, reason: 'the relay', late: 0 }, older] });
    run.clock.advance(4 * MINUTE);
    run.rule.setDown('1', false);

    expect(run.shown).toEqual([true, false]);
    expect(said(run)).toEqual(['warn: Doorbell alerts stopped: 1 down. Do something.', 'info: Doorbell alerts are flowing again after 15 min (the relay)']);
    expect(run.rule.record()).toEqual({
      alerts: { flowing: true, since: iso(START + 5 * MINUTE + 10_000), reason: null },
      outages: [{ from, to: iso(START + 5 * MINUTE + 10_000), reason: 'the relay', late: 0 }, older],
    });
  });

  it('is taken as at launch while nothing is decided yet, and only once', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.clock.advance(20_000);
    run.rule.restore(stoppedAtShutdown);
    run.rule.restore({ alerts: { flowing: true, since: from, reason: null }, outages: [] });
    run.clock.advance(MINUTE);

    expect(run.shown).toEqual([true]);
    expect(run.rule.record()).toEqual(stoppedAtShutdown);
  });

  it('goes after this run\'s own outages when alerts flowed at the last shutdown', () => {
    const run = startRule(['1']);
    run.rule.restore(undefined);
    run.clock.advance(MINUTE);
    run.rule.setDown('1', false);
    run.rule.restore({ alerts: { flowing: true, since: older.to as string, reason: null }, outages: [older] });

    expect(run.shown).toEqual([true, false]);
    expect(run.rule.record()).toEqual({
      alerts: { flowing: true, since: iso(START + MINUTE), reason: null },
      outages: [{ from: iso(START), to: iso(START + MINUTE), reason: '1 down', late: 0 }, older],
    });
  });
});

/**
 * Why alerts stopped, in the words of the warning and status.json: each reason the plugin can see, the
 * first down doorbell's when several are, and what to do, naming the settings page where signing in is
 * the fix. The words come from an error's kind and status alone, so an address or a path never reaches
 * status.json.
 */
const DOORBELLS = [
  { deviceId: '1', name: 'Front Door' },
  { deviceId: '2', name: 'Back Door' },
  { deviceId: '3', name: 'Garage' },
  { deviceId: '4', name: 'Side Gate' },
  { deviceId: '5', name: 'Shed' },
];
const RELAY: ReasonSettings['push'] = { mode: 'relay', direct: { host: '0.0.0.0', port: 47850 } };
const DIRECT: ReasonSettings['push'] = { ...RELAY, mode: 'direct' };
const NOW = new Date(2026, 2, 1, 10, 30).getTime();
const SINCE = new Date(2026, 2, 1, 10, 2).getTime();
const SETTINGS_PAGE = "the plugin's settings page in the Homebridge UI";

const httpError = (status: number) => new CloudError({ kind: 'http', method: 'POST', path: '/clients_api/doorbots/1/motions_subscribe', status });
const reasons = (push = RELAY) => new DownReasons({ doorbells: DOORBELLS, push });

describe('why alerts stopped', () => {
  it.each<[SessionLoss, string]>([
    ['expired', 'the session expired'],
    ['signed-out', 'signed out'],
  ])('a session %s: says so, and to sign in again on the settings page', (loss, words) => {
    const down = reasons();
    down.sessionUnavailable(loss);

    const reason = down.describe(['1', '2'], SINCE, NOW);
    expect(reason.words).toBe(words);
    expect(reason.todo).toMatch(new RegExp(`^Sign in again: .* on ${SETTINGS_PAGE}`));
  });

  it('the relay unreachable, since when on this machine\'s clock; or refusing access, naming the token', () => {
    const down = reasons();
    down.deliveryDown({ since: SINCE, refused: false });
    expect(down.describe(['1'], NOW, NOW).words).toBe('the relay has been unreachable since 10:02');
    down.deliveryDown({ since: SINCE - 24 * 3_600_000, refused: false });
    expect(down.describe(['1'], NOW, NOW).words).toBe('the relay has been unreachable since 2026-02-28 10:02');
    down.deliveryDown({ since: SINCE, refused: true });
    expect(down.describe(['1'], NOW, NOW)).toEqual({ words: 'the relay refused access', todo: `Check push.relayToken on ${SETTINGS_PAGE}; the plugin keeps trying.` });
  });

  it('a subscription failing: the first down doorbell\'s cause, with every doorbell whose subscription failed', () => {
    const down = reasons();
    down.subscriptionFailed('2', httpError(404));
    down.subscriptionFailed('3', httpError(503));
    expect(down.describe(['2', '3'], SINCE, NOW).words).toBe('the subscription of Back Door and Garage failed (the doorbell service does not know this device id)');
    DOORBELLS.forEach(({ deviceId }) => down.subscriptionFailed(deviceId, httpError(503)));
    expect(down.describe(['5', '4', '3', '2', '1'], SINCE, NOW).words).toBe('the subscription of Shed, Side Gate, Garage and 2 more failed (the doorbell service answered HTTP 503)');
    down.subscribed('2');
    expect(down.describe(['3'], SINCE, NOW).words).toBe('the subscription of Garage failed (the doorbell service answered HTTP 503)');
    down.subscribed('1');
    down.sessionUnavailable('signed-out');
    down.subscribed('5');
    expect(down.describe(['1', '3'], SINCE, NOW).words).toBe('the subscription of Front Door is not confirmed yet');
  });

  it('the push registration failing, or the receiver unable to listen, or signing in failing', () => {
    const down = reasons(DIRECT);
    down.connectFailed('registration', new CloudError({ kind: 'network', method: 'POST', path: '/clients_api/device', detail: 'ECONNREFUSED' }));
    expect(down.describe(['1'], SINCE, NOW).words).toBe('the push registration failed (the doorbell service cannot be reached)');
    down.connectFailed('push-endpoint', new Error('Push receiver cannot listen on 0.0.0.0:47850: the port is already in use'));
    expect(down.describe(['1'], SINCE, NOW)).toEqual({
      words: 'the push receiver cannot listen on 0.0.0.0:47850',
      todo: `Free port 47850, or choose another push.port, push.host or relay mode on ${SETTINGS_PAGE}.`,
    });
    down.connectFailed('session', new CloudError({ kind: 'timeout', method: 'POST', path: '/v4/auth/email/login' }));
    expect(down.describe(['1'], SINCE, NOW).words).toBe('signing in failed (the account service did not answer in time)');
  });

  it('the relay stream not opening at launch: unreachable since the doorbells went down', () => {
    const down = reasons();
    down.connectFailed('push-endpoint', new Error('The push relay https://ntfy.sh did not open a stream within 30 s.'));

    expect(down.describe(['1', '2'], SINCE, NOW).words).toBe('the relay has been unreachable since 10:02');
  });

  it('nothing known yet: the doorbells not confirmed', () => {
    expect(reasons().describe(['1', '2'], SINCE, NOW)).toEqual({ words: 'the subscription of Front Door and Back Door is not confirmed yet', todo: 'The plugin keeps trying.' });
  });

  it.each([
    [CONFIGURATION_INVALID, 'the configuration is invalid', /^Fix the settings the log names, on the plugin's settings page/],
    [NOT_CONFIGURED, 'the plugin is not configured yet', /^Sign in and add your doorbells on the plugin's settings page/],
    [NODE_TOO_OLD, 'this Node.js is too old', /^Update Node\.js to version 22\.12 or later/],
  ])('the whole plugin down: %s', (key, words, todo) => {
    const reason = reasons().describe([key], SINCE, NOW);

    expect(reason.words).toBe(words);
    expect(reason.todo).toMatch(todo);
  });

  it('a session lost outweighs what the doorbells were doing before', () => {
    const down = reasons();
    down.subscriptionFailed('1', httpError(503));
    down.deliveryDown({ since: SINCE, refused: false });
    down.sessionUnavailable('expired');

    expect(down.describe(['1'], SINCE, NOW).words).toBe('the session expired');
  });
});
