/**
 * The rule of the Doorbell Alerts sensor on a clock the test moves: alerts stop once something has
 * been down for a minute without a break, and flow again the moment nothing is down; one warning per
 * stop, one info line per recovery; nothing is decided before the last run's record is restored, and
 * an outage that outlived a restart stays one outage; at most 20 outages are kept, newest first.
 */
import { describe, expect, it } from '@jest/globals';
import { ALERTS_OPEN_AFTER_MS, AlertsRule, type AlertsClock } from '../../src/alerts/alerts-rule.js';
import type { AlertsRecord, Outage } from '../../src/alerts/alerts-state.js';
import { createTestLogger, type TestLogger } from '../support/homebridge-api.js';

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
      outages: [{ from: iso(START), to: null, reason: '1 down' }],
    });
    run.clock.advance(MINUTE);
    run.rule.setDown('1', false);

    expect(run.rule.record()).toEqual({
      alerts: { flowing: true, since: iso(START + 2 * MINUTE), reason: null },
      outages: [{ from: iso(START), to: iso(START + 2 * MINUTE), reason: '1 down' }],
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
    expect(outages[0]).toEqual({ from: iso(START), to: null, reason: '1 down' });
    expect(outages.slice(1)).toEqual(old.slice(0, 19));
  });
});
