/**
 * Latency over Matter: a real Homebridge 2 (the devDependency) with Matter on, in a private network
 * (as the Matter tests run it), the plugin in direct mode, commissioned by a matter.js controller.
 * Each motion alert is timed twice: by the plugin, from the notification accepted (before HomeKit is
 * updated) to the Matter update confirmed by reading it back (its debug line); and from the POST
 * leaving the sender to the occupancy report at the controller, matter.js's reporting delay included.
 * A run that does not time every alert both ways fails rather than report a figure from fewer samples.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Simulator } from '../../simulator/index.js';
import { HomebridgeSandbox } from '../lib/homebridge-sandbox.js';
import { MATTER_RUNTIMES } from '../lib/homebridge-versions.js';
import { occupancyOf, type MatterTestClient } from '../lib/matter/matter-client.js';
import { platformConfig } from '../lib/platform-harness.js';
import { pollUntil } from '../lib/poll.js';
import { freeLoopbackPort, type HomebridgeProcess } from '../lib/homebridge-process.js';
import { REPO_ROOT } from '../lib/paths.js';
import { startBenchCloud } from './in-process.js';
import { ARRIVAL_TIMEOUT_MS, latencyFigure, NotificationSender, type LatencyFigure } from './latency.js';
import { doorbellEntries, doorbellIds, type BenchSettings } from './settings.js';

export interface MatterFigure {
  /** The plugin's own part: notification accepted to Matter state confirmed. */
  plugin: LatencyFigure;
  /** What a Matter controller sees: the POST leaving the sender to the occupancy report. */
  controller: LatencyFigure;
  doorbells: number;
}

/** The shortest the config allows: each round waits for every doorbell's occupancy to clear. */
const MOTION_TIMEOUT_S = 5;

/** Registration, commissioning and the first read of every device, with 100 doorbells, on a slow machine. */
const READY_TIMEOUT_MS = 60_000;

/** The plugin's debug line for a confirmed Matter occupancy (src/matter/matter-endpoint.ts). */
const CONFIRMED_LINE = /\] Matter: .+ occupied, ([\d.]+) ms after the motion alert was accepted$/;

export async function matterPhase(settings: BenchSettings): Promise<MatterFigure> {
  const doorbells = doorbellIds(settings.matterDoorbells);
  const sim = await startBenchCloud(doorbells);
  const sandbox = await HomebridgeSandbox.create({ matter: true });
  try {
    const { homebridge, controller } = await startWithController(sim, sandbox, doorbells);
    const sender = new NotificationSender(sim);
    const endpoints = await endpointsBySerialNumber(controller, doorbells);
    const firstLine = homebridge.lines.length;
    const seen: number[] = [];
    for (let round = 0; round < settings.matterRounds; round += 1) {
      for (const deviceId of doorbells) {
        const reported = controller.nextChange(occupancyOf(endpoints.get(deviceId) as number, true), ARRIVAL_TIMEOUT_MS);
        reported.catch(() => undefined);
        const sentAt = performance.timeOrigin + performance.now();
        await sender.sendAccepted(deviceId, 'motion');
        seen.push((await reported).at - sentAt);
      }
      await sleep(MOTION_TIMEOUT_S * 1000);
      await pollUntil(() => doorbellDevices(controller, doorbells), (devices) => devices.every(({ occupied }) => occupied === false), ARRIVAL_TIMEOUT_MS, 'every doorbell clear');
    }
    const confirmed = homebridge.lines.slice(firstLine).flatMap((line) => {
      const match = CONFIRMED_LINE.exec(line);
      return match === null ? [] : [Number(match[1])];
    });
    const alerts = doorbells.length * settings.matterRounds;
    if (confirmed.length !== alerts || seen.length !== alerts) {
      throw new Error(`Matter: ${alerts} motion alerts sent, ${confirmed.length} timed by the plugin and ${seen.length} by the controller`);
    }
    return { plugin: latencyFigure(confirmed), controller: latencyFigure(seen), doorbells: doorbells.length };
  } finally {
    await sandbox.dispose();
    await sim.close();
  }
}

/** Homebridge in its private network, its doorbells subscribed and reachable, read by a commissioned controller. */
async function startWithController(
  sim: Simulator,
  sandbox: HomebridgeSandbox,
  doorbells: readonly string[],
): Promise<{ homebridge: HomebridgeProcess; controller: MatterTestClient }> {
  const [runtime] = MATTER_RUNTIMES;
  const pushPort = await freeLoopbackPort();
  // One occupancy sensor each: a ring is an event, with no state the plugin could confirm, and a
  // plain motion occupies no detection's sensor.
  const entries = doorbellEntries(doorbells).map(({ deviceId, name }) => ({ deviceId, name, button: false }));
  await sandbox.writeConfig([platformConfig(sim, pushPort, { doorbells: entries, motionTimeout: MOTION_TIMEOUT_S })]);
  const serverUrls = [sim.accountUrl, sim.regionUrl, sim.doorbellUrl];
  const { homebridge, matter: controller } = await sandbox.startWithMatter(runtime, REPO_ROOT, { pushPort, serverUrls });
  await pollUntil(
    () => doorbellDevices(controller, doorbells),
    (devices) => devices.length === doorbells.length && devices.every(({ reachable }) => reachable === true),
    READY_TIMEOUT_MS,
    'every doorbell subscribed and reachable over Matter',
  );
  return { homebridge, controller };
}

/** The doorbells' devices: the bridge publishes the Doorbell Alerts contact sensor beside them. */
async function doorbellDevices(controller: MatterTestClient, doorbells: readonly string[]) {
  return (await controller.bridgedDevices()).filter(({ serialNumber }) => doorbells.includes(serialNumber as string));
}

async function endpointsBySerialNumber(controller: MatterTestClient, doorbells: readonly string[]): Promise<Map<string, number>> {
  const devices = await controller.bridgedDevices();
  return new Map(doorbells.map((deviceId) => [deviceId, devices.find(({ serialNumber }) => serialNumber === deviceId)?.endpoint as number]));
}
