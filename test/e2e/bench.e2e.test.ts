/**
 * The benchmark (`npm run bench`, scripts/bench.ts) in its quick mode: it runs end to end, real
 * Homebridge included (with Matter on, in a private network, for the Matter figures), and writes
 * every figure, so the script cannot rot unnoticed. The figures are checked for sense, never against
 * the targets: on a busy test machine they are noise.
 */
import { expect, it } from '@jest/globals';
import { runQuickScript } from '../support/quick-script.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';

/** The quick run takes about a minute; a loaded machine gets more, but not forever. */
const BENCH_TIMEOUT_MS = 120_000;

interface Latency {
  n: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

function expectLatency(latency: Latency, samples: number): void {
  expect(latency.n).toBeGreaterThanOrEqual(samples);
  expect(latency.p50Ms).toBeGreaterThan(0);
  expect(latency.p50Ms).toBeLessThanOrEqual(latency.p95Ms);
  expect(latency.p95Ms).toBeLessThanOrEqual(latency.p99Ms);
  expect(latency.p99Ms).toBeLessThan(1_000);
}

function expectSpread({ min, median, max }: { min: number; median: number; max: number }): void {
  expect(Number.isFinite(min)).toBe(true);
  expect(min).toBeLessThanOrEqual(median);
  expect(median).toBeLessThanOrEqual(max);
}

describeWithBuiltPlugin('npm run bench -- --quick', () => {
  it(
    'writes every figure of the benchmark, each a sane number',
    async () => {
      // As `npm run bench` runs it after its build.
      const { output, results } = await runQuickScript({ script: 'bench', nodeFlags: ['--expose-gc'], testTimeoutMs: BENCH_TIMEOUT_MS });
      expect(output).toContain('| start-up, 100 doorbells |');

      expect(results.quick).toBe(true);
      for (const size of ['n1', 'n10', 'n100', 'accounts', 'homebridge']) {
        const { ms, idealMs, efficiency, cloudAnswerMs } = results.startup[size];
        // Every request takes the cloud's 100 ms: no start-up beats the ideal by more than a timer's slack.
        expect(ms).toBeGreaterThan(idealMs * 0.95);
        expect(efficiency).toBeGreaterThan(0.2);
        expect(efficiency).toBeLessThan(1.05);
        expect(cloudAnswerMs).toBeGreaterThanOrEqual(99);
      }
      expect(results.startup.n100.idealMs).toBe(1600);
      // The same 100 doorbells in 10 accounts of 10, against the same ideal, with when each kind of call last answered.
      expect(output).toContain('| start-up, 10 accounts × 10 doorbells |');
      expect([results.startup.accounts.accounts, results.startup.accounts.doorbellsPerAccount, results.startup.accounts.idealMs]).toEqual([10, 10, 1600]);
      // Held to one account of as many doorbells started in turn with it: a quick run starts each once.
      const { oneAccount, runsMs } = results.startup.accounts;
      expect(runsMs).toEqual({ accounts: [results.startup.accounts.ms], oneAccount: [oneAccount.ms] });
      expect(oneAccount.idealMs).toBe(1600);
      expect(oneAccount.ms).toBeGreaterThan(oneAccount.idealMs * 0.95);
      expect(output).toContain(`started in turn with one account of as many doorbells: ${oneAccount.ms} ms, efficiency ${oneAccount.efficiency}`);
      const { lastRegionMs, lastLoginMs, lastRegistrationMs, firstSubscriptionMs, lastSubscriptionMs, registrationArrivalsMs } = results.startup.accounts.calls;
      expect(registrationArrivalsMs).toHaveLength(10);
      expect(lastRegionMs).toBeLessThan(lastLoginMs);
      expect(lastLoginMs).toBeLessThan(lastRegistrationMs);
      expect(firstSubscriptionMs).toBeLessThanOrEqual(lastSubscriptionMs);
      // Not a figure but the restart's defining property: the stored session is used.
      expect(results.warmRestart.logins).toBe(0);
      expect(results.warmRestart.ms).toBeGreaterThan(results.warmRestart.idealMs * 0.95);

      for (const path of ['inProcess', 'homekit', 'relay']) {
        // Through a real Homebridge a doorbell rings at most once in 5 s: each of the 5 once.
        const rings = path === 'homekit' ? 5 : 50;
        expectLatency(results.latency[path], rings);
        expectLatency(results.latency[path].ringChimeOff, rings);
        expectLatency(results.latency[path].motion, 5);
        expectLatency(results.latency[path].personMotion, 5);
      }

      // Over Matter: the plugin's own part, confirmed at Homebridge, is within what the controller sees.
      expect(results.matter.doorbells).toBe(5);
      expectLatency(results.matter.plugin, 5);
      expectLatency(results.matter.controller, 5);
      expect(results.matter.controller.p50Ms).toBeGreaterThan(results.matter.plugin.p50Ms);
      expect(output).toContain('| Matter, the plugin\'s own work, 5 doorbells |');

      const { sent, accepted, lost, perSecond, heapGrowthMb } = results.burst;
      expect(sent).toBe(500);
      // Counts, not timings: every ring is for a configured doorbell and must arrive, on any machine.
      expect(accepted).toBe(sent);
      expect(lost).toBe(0);
      expect(perSecond).toBeGreaterThan(0);
      expect(Number.isFinite(heapGrowthMb)).toBe(true);

      const { memory } = results;
      expect(memory.runs).toBeGreaterThanOrEqual(1);
      expect(memory.collected).toBe(true);
      expect(typeof memory.settled).toBe('boolean');
      expect(memory.homebridge.heapMb).toBeGreaterThan(5);
      expectSpread(memory.homebridge.rssMb);
      expect(memory.homebridge.rssMb.min).toBeGreaterThan(20);
      for (const [size, doorbells] of [['n1', 1], ['n100', 5], ['batteries', 5]] as const) {
        const figure = memory[size];
        expect(figure.doorbells).toBe(doorbells);
        // The plugin's modules alone take megabytes: a figure near zero means the plugin was not measured.
        expect(figure.heapOverheadMb).toBeGreaterThan(1);
        expect(figure.heapOverheadMb).toBeLessThan(100);
        expect(figure.heapOverheadSpreadMb).toBeGreaterThanOrEqual(0);
        expectSpread(figure.rssOverheadMb);
        expectSpread(figure.rssHeldOverheadMb);
      }
      expect(output).toContain('| memory added, 5 doorbells |');
      // A Battery service on 5 doorbells is kilobytes: a difference of megabytes either way means a set-up was not what it says.
      const { heapMb, heapSpreadMb, rssMb } = memory.batteriesAdded;
      expect(Math.abs(heapMb)).toBeLessThan(1);
      expect(heapSpreadMb).toBeGreaterThanOrEqual(0);
      expectSpread(rssMb);
      expect(output).toContain('| memory added, 5 doorbells with a battery each |');
      expect(output).toMatch(/\| batteries on 5 doorbells, against none \| heap \+ external [+-][\d.]+ MiB .*\| heap \+ external ≤ 0\.3 MiB: (met|\*\*missed\*\*) \|/);

      expect(results.machine.cores).toBeGreaterThanOrEqual(1);
      expect(results.machine.node).toMatch(/^v\d+\./);
      expect(typeof results.machine.privateNetwork).toBe('boolean');
      expect(results.durationS).toBeGreaterThan(0);
    },
    BENCH_TIMEOUT_MS,
  );
});
