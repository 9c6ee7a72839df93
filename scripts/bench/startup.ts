/**
 * Start-up against a cloud that answers every request 100 ms late, timed by the cloud's clock from
 * the first request it receives to the last subscription it answers: with a fresh sign-in, then a
 * restart on a stored session. In this process, in relay mode, the mode a user gets by default.
 */
import type { Simulator } from '../../simulator/index.js';
import type { Relay } from '../../simulator/relay/index.js';
import { reloadFromCache } from '../lib/homebridge-api.js';
import { ACCOUNT, temporaryStorage, type RunningPlatform } from '../lib/platform-harness.js';
import { round2 } from './latency.js';
import { CloudClock, type CallTimes } from './cloud-clock.js';
import { launchInProcess, stopInProcess, whenAllConfirmed, type BenchAccount } from './in-process.js';
import { CLOUD_LATENCY_MS, doorbellIds, idealStartupMs, SUBSCRIPTION_WAVE } from './settings.js';

export interface StartupFigure {
  ms: number;
  idealMs: number;
  efficiency: number;
  /** The simulator's mean answer time: the 100 ms latency and what it spends itself. */
  cloudAnswerMs: number;
}

/** The same start-up with its doorbells shared out among several accounts, and when each kind of call was last answered. */
export interface AccountsStartupRun extends StartupFigure {
  accounts: number;
  doorbellsPerAccount: number;
  calls: CallTimes;
}

/**
 * The several accounts' start-up (its median run) beside one account with as many doorbells (its
 * median run), the two started in turn, and every run's time.
 */
export interface AccountsStartupFigure extends AccountsStartupRun {
  oneAccount: StartupFigure;
  runsMs: { accounts: number[]; oneAccount: number[] };
}

export interface WarmRestartFigure {
  logins: number;
  ms: number;
  cloudAnswerMs: number;
  /** The registration, then the subscription waves: no region or login call. */
  idealMs: number;
}

export interface StartupCloud {
  sim: Simulator;
  relay: Relay;
}

/** A started plugin, kept for what is measured on it next. */
export interface Started {
  running: RunningPlatform;
  doorbells: readonly string[];
  storage: Awaited<ReturnType<typeof temporaryStorage>>;
}

/** A start-up takes seconds against a 100 ms cloud; this long means something broke. */
const STARTUP_TIMEOUT_MS = 30_000;

export interface CloudTiming {
  ms: number;
  cloudAnswerMs: number;
}

export function startupFigure({ ms, cloudAnswerMs }: CloudTiming, doorbells: number): StartupFigure {
  const idealMs = idealStartupMs(doorbells);
  return { ms: round2(ms), idealMs, efficiency: round2(idealMs / ms), cloudAnswerMs: round2(cloudAnswerMs) };
}

/**
 * Runs `launch`, and times from the first request the cloud receives to its answer to the last of
 * `count` subscriptions.
 */
export async function timeCloudStartup<T>(sim: Simulator, count: number, launch: () => Promise<T> | T): Promise<CloudTiming & { launched: T; calls: CallTimes }> {
  const clock = new CloudClock(sim);
  try {
    const launched = await launch();
    const lastAnsweredAt = await clock.subscriptionsAnswered(count, STARTUP_TIMEOUT_MS);
    return { ms: lastAnsweredAt - clock.firstRequestAt, cloudAnswerMs: clock.meanAnswerMs, launched, calls: clock.callTimes() };
  } finally {
    clock.stop();
  }
}

/** A fresh storage signs in with account.code: the simulator gets a fresh, unspent code first. */
export async function startFresh({ sim, relay }: StartupCloud, count: number): Promise<{ started: Started; figure: StartupFigure }> {
  sim.addAccount({ ...ACCOUNT });
  const doorbells = doorbellIds(count);
  const storage = await temporaryStorage();
  let launched: RunningPlatform | undefined;
  try {
    const { launched: running, ms, cloudAnswerMs } = await timeCloudStartup(sim, count, () => {
      launched = launchInProcess({ sim, push: relay.url, storagePath: storage.path, doorbells });
      return launched;
    });
    // The cloud has answered; the plugin confirms each doorbell a moment later.
    await whenAllConfirmed(running.test, doorbells);
    return { started: { running, doorbells, storage }, figure: startupFigure({ ms, cloudAnswerMs }, count) };
  } catch (error) {
    // Not handed to the caller yet, so stopped here: no platform or folder outlives a failed start.
    if (launched !== undefined) {
      await stopInProcess(launched, relay.url).catch(() => undefined);
    }
    await storage.remove();
    throw error;
  }
}

/**
 * The fresh start-up of `accounts` accounts of `perAccount` doorbells each, every account its own
 * e-mail, code and doorbells in the simulator: the same doorbells in all as one account with
 * accounts × perAccount, against the same ideal, since the accounts are to start at once.
 */
export async function startAccountsFresh({ sim, relay }: StartupCloud, accounts: number, perAccount: number): Promise<{ started: Started; figure: AccountsStartupRun }> {
  const doorbells = doorbellIds(accounts * perAccount);
  const entries: BenchAccount[] = Array.from({ length: accounts }, (_, index) => ({
    email: `bench${index + 1}@example.com`,
    code: String(100_000 + index + 1),
    doorbells: doorbells.slice(index * perAccount, (index + 1) * perAccount),
  }));
  entries.forEach(({ email, code, doorbells: own }) => sim.addAccount({ email, code, doorbells: [...own] }));
  const storage = await temporaryStorage();
  let launched: RunningPlatform | undefined;
  try {
    const { launched: running, calls, ...timing } = await timeCloudStartup(sim, doorbells.length, () => {
      launched = launchInProcess({ sim, push: relay.url, storagePath: storage.path, doorbells, accounts: entries });
      return launched;
    });
    await whenAllConfirmed(running.test, doorbells);
    const figure = {
      ...startupFigure(timing, doorbells.length),
      accounts,
      doorbellsPerAccount: perAccount,
      calls: {
        lastRegionMs: round2(calls.lastRegionMs),
        lastLoginMs: round2(calls.lastLoginMs),
        firstRegistrationMs: round2(calls.firstRegistrationMs),
        lastRegistrationMs: round2(calls.lastRegistrationMs),
        registrationArrivalsMs: calls.registrationArrivalsMs.map(round2),
        listReadArrivalsMs: calls.listReadArrivalsMs.map(round2),
        firstSubscriptionMs: round2(calls.firstSubscriptionMs),
        lastSubscriptionMs: round2(calls.lastSubscriptionMs),
      },
    };
    return { started: { running, doorbells, storage }, figure };
  } catch (error) {
    if (launched !== undefined) {
      await stopInProcess(launched, relay.url).catch(() => undefined);
    }
    await storage.remove();
    throw error;
  }
}

/**
 * The start-up of `accounts` accounts of `perAccount` doorbells beside one account with as many, each
 * started fresh and stopped `pairs` times in turn, which of the two goes first alternating (a machine
 * growing busier or quieter favours neither); each figure is its run of median time. Both take the
 * same rounds of cloud calls, so what tells them apart is the plugin's own work per account, tens of
 * ms at most: about what one run's time varies by, which one run of each cannot tell apart.
 */
export async function compareAccountsStartup(cloud: StartupCloud, accounts: number, perAccount: number, pairs: number): Promise<AccountsStartupFigure> {
  const several: AccountsStartupRun[] = [];
  const one: StartupFigure[] = [];
  /** A fresh start-up, stopped at once: only its figure is kept. */
  const runOnce = <F>(start: () => Promise<{ started: Started; figure: F }>, figures: F[]) => async (): Promise<void> => {
    const { started, figure } = await start();
    await stopStarted(cloud, started);
    figures.push(figure);
  };
  const startSeveral = runOnce(() => startAccountsFresh(cloud, accounts, perAccount), several);
  const startOne = runOnce(() => startFresh(cloud, accounts * perAccount), one);
  for (let pair = 0; pair < pairs; pair += 1) {
    for (const start of pair % 2 === 0 ? [startOne, startSeveral] : [startSeveral, startOne]) {
      await start();
    }
  }
  return { ...medianRun(several), oneAccount: medianRun(one), runsMs: { accounts: several.map(({ ms }) => ms), oneAccount: one.map(({ ms }) => ms) } };
}

/** The run of median time (of an even number, the slower of the middle two). */
function medianRun<T extends { ms: number }>(runs: readonly T[]): T {
  return [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];
}

export async function stopStarted(cloud: StartupCloud, { running, storage }: Started): Promise<void> {
  await stopInProcess(running, cloud.relay.url);
  await storage.remove();
}

/**
 * Homebridge restarted on the same storage, its accessories restored from the cache: the stored
 * session is used, so no login may happen; the first request is the registration.
 */
export async function warmRestart(cloud: StartupCloud, previous: Started): Promise<{ started: Started; figure: WarmRestartFigure }> {
  const { sim, relay } = cloud;
  const { doorbells, storage } = previous;
  const cached = [...previous.running.test.registered.values()].map(reloadFromCache);
  await stopInProcess(previous.running, relay.url);
  sim.reset();
  const { ms, cloudAnswerMs, launched: running } = await timeCloudStartup(sim, doorbells.length, () =>
    launchInProcess({ sim, push: relay.url, storagePath: storage.path, doorbells, cached }),
  );
  await whenAllConfirmed(running.test, doorbells);
  const figure = {
    logins: sim.requestsTo('login').length,
    ms: round2(ms),
    cloudAnswerMs: round2(cloudAnswerMs),
    idealMs: (1 + Math.ceil(doorbells.length / SUBSCRIPTION_WAVE)) * CLOUD_LATENCY_MS,
  };
  return { started: { running, doorbells, storage }, figure };
}
