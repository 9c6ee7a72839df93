/**
 * The set-ups the figures come from, each started, measured and torn down in turn, so that no
 * set-up's work runs while another is measured (the memory figures' own are in memory.ts).
 */
import { startRelay } from '../../simulator/relay/index.js';
import { freeLoopbackPort } from '../lib/homebridge-config.js';
import { temporaryStorage } from '../lib/platform-harness.js';
import { runBurst, type BurstFigure } from './burst.js';
import { BenchHomebridge } from './homebridge.js';
import { homekitLatency } from './homekit.js';
import { characteristicProbe, inProcessRings, launchInProcess, relayTimeAlwaysDue, startBenchCloud, stopInProcess, whenAllConfirmed } from './in-process.js';
import { NotificationSender, pathLatency, type PathLatency } from './latency.js';
import { doorbellIds, STARTUP_ACCOUNTS, STARTUP_SIZES, type BenchSettings } from './settings.js';
import {
  compareAccountsStartup,
  startFresh,
  startupFigure,
  stopStarted,
  timeCloudStartup,
  warmRestart,
  type AccountsStartupFigure,
  type Started,
  type StartupFigure,
  type WarmRestartFigure,
} from './startup.js';

type StartupSize = (typeof STARTUP_SIZES)[number];

export interface RelayPhase {
  startup: Record<`n${StartupSize}`, StartupFigure>;
  /** The largest start-up's doorbells in several accounts (STARTUP_ACCOUNTS), beside one account with them, started in turn. */
  accountsStartup: AccountsStartupFigure;
  warmRestart: WarmRestartFigure;
  relayLatency: PathLatency;
}

/**
 * In this process, relay mode through the loopback relay: start-up with 1, 10 and 100 doorbells on
 * fresh storage, the relay's latency on the largest, then its restart on a stored session. The smaller
 * runs go first, so the largest finds Node's compiler warm and measures the plugin's concurrency
 * rather than first-run compilation; the real Homebridge's start-up is the cold one. Last, the
 * largest start-up's doorbells in several accounts and in one, started in turn.
 */
export async function relayPhase(settings: BenchSettings): Promise<RelayPhase> {
  const largest = Math.max(...STARTUP_SIZES);
  const sim = await startBenchCloud(doorbellIds(largest));
  const relay = await startRelay({ now: relayTimeAlwaysDue() });
  const cloud = { sim, relay };
  const running: Started[] = [];
  try {
    const startup: Partial<RelayPhase['startup']> = {};
    for (const size of STARTUP_SIZES) {
      const { started, figure } = await startFresh(cloud, size);
      running.push(started);
      startup[`n${size}`] = figure;
      if (size !== largest) {
        await stopStarted(cloud, running.pop() as Started);
      }
    }
    const [kept] = running;
    const relayLatency = await pathLatency(new NotificationSender(sim), kept.doorbells, characteristicProbe(kept.running.test), inProcessRings(settings));
    const restarted = await warmRestart(cloud, running.pop() as Started);
    await stopStarted(cloud, restarted.started);
    const accountsStartup = await compareAccountsStartup(cloud, STARTUP_ACCOUNTS.accounts, STARTUP_ACCOUNTS.doorbellsPerAccount, settings.accountsStartupPairs);
    return { startup: startup as RelayPhase['startup'], accountsStartup, warmRestart: restarted.figure, relayLatency };
  } finally {
    await Promise.all(running.map((started) => stopStarted(cloud, started)));
    await relay.close();
    await sim.close();
  }
}

export interface DirectPhase {
  inProcessLatency: PathLatency;
  burst: BurstFigure;
}

/** In this process, direct mode: the receiver's latency, then the burst, on the bridge's doorbells. */
export async function directPhase(settings: BenchSettings): Promise<DirectPhase> {
  const doorbells = doorbellIds(settings.doorbells);
  const sim = await startBenchCloud(doorbells);
  const storage = await temporaryStorage();
  const port = await freeLoopbackPort();
  const running = launchInProcess({ sim, push: port, storagePath: storage.path, doorbells });
  try {
    await whenAllConfirmed(running.test, doorbells);
    const sender = new NotificationSender(sim);
    const inProcessLatency = await pathLatency(sender, doorbells, characteristicProbe(running.test), inProcessRings(settings));
    const burst = await runBurst(sender, running, doorbells, settings.burstSize, settings.burstConcurrency);
    return { inProcessLatency, burst };
  } finally {
    await stopInProcess(running, port);
    await storage.remove();
    await sim.close();
  }
}

export interface HomebridgePhase {
  /** The same start-up figure, from a real Homebridge in direct mode, cold. */
  startup: StartupFigure;
  homekitLatency: PathLatency;
}

/**
 * A real Homebridge 2 child process with the plugin in direct mode on the bridge's doorbells, timed
 * through its fresh sign-in and subscriptions, then paired with a HomeKit controller for the latency.
 */
export async function homebridgePhase(settings: BenchSettings): Promise<HomebridgePhase> {
  const doorbells = doorbellIds(settings.doorbells);
  const sim = await startBenchCloud(doorbells);
  const withPlugin = await BenchHomebridge.create({ sim, doorbells });
  try {
    const { launched, ...timing } = await timeCloudStartup(sim, doorbells.length, () => withPlugin.start());
    await launched.waitForLine(new RegExp(`${doorbells.length} of ${doorbells.length} doorbells subscribed`), 10_000);
    const latency = await homekitLatency(withPlugin, new NotificationSender(sim), doorbells, settings.homekitRingRounds);
    return { startup: startupFigure(timing, doorbells.length), homekitLatency: latency };
  } finally {
    await withPlugin.dispose();
    await sim.close();
  }
}
