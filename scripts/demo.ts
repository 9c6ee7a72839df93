/**
 * The demo (`npm start`): the simulated account and doorbell services inside this process, and a
 * real Homebridge with this plugin loaded from the working folder and its storage in the demo folder.
 * `npm run motion -- <deviceId>` (scripts/motion.ts) then delivers motion alerts to it.
 *
 * Every run starts a fresh simulator, which knows nothing of earlier runs. So each run gives the
 * demo account a new one-time code and forgets the plugin's stored session; everything else in the
 * folder is kept, the HomeKit pairing included.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startSimulator, type Simulator } from '../simulator/index.js';
import { startRelay } from '../simulator/relay/index.js';
import type { Relay } from '../simulator/relay/index.js';
import {
  demoDir,
  forgetPreviousSession,
  isDefaultDemoDir,
  readBridgeIdentity,
  removeDemoInfo,
  writeDemoInfo,
} from './lib/demo-folder.js';
import { BRIDGE_NAME, demoAccounts, demoControlsNote, demoDevices, demoPlatform, MAX_DEMO_ACCOUNTS, simulatedDemoAccounts, type DemoAccount } from './lib/demo-setup.js';
import {
  currentNodeRunsHomebridge2,
  freeLoopbackPort,
  newBridgeIdentity,
  REQUIRED_NODE_MAJOR,
  resolveNode22Binary,
  startHomebridge,
  writeHomebridgeConfig,
  type BridgeSettings,
  type HomebridgeProcess,
} from './lib/homebridge-process.js';
import { parseCommandLine } from '../simulator/cli.js';
import { stopSignal, unlessStopped, whenAborted } from './lib/stop-signal.js';
import { HOMEBRIDGE_2_BIN, PLUGIN_ENTRY, REPO_ROOT } from './lib/paths.js';

const USAGE = [
  'usage: npm start -- [--loopback] [--dir PATH] [--accounts N]',
  '  --loopback  keep Homebridge on this machine (also DEMO_LOOPBACK=1): nothing is advertised on',
  '              the network, so the Home app cannot pair with it',
  '  --dir PATH  the demo folder; default .demo/ in this repository',
  `  --accounts N  N accounts (1 to ${MAX_DEMO_ACCOUNTS}) in the platform block's accounts: the demo account, then`,
  '              user<k>@example.com with doorbell k000001 (2000001 ...), as `npm run simulator -- --accounts N`',
].join('\n');

/** Homebridge publishes within seconds; a first start on a slow machine gets more. */
const PUBLISH_TIMEOUT_MS = 60_000;
/** Against the local simulator, sign-in to subscription takes well under a second. */
const SUBSCRIBE_TIMEOUT_MS = 15_000;
/** Homebridge forces its own exit 5 s after SIGTERM; stop() falls back to SIGKILL after this. */
const STOP_TIMEOUT_MS = 12_000;

const PUBLISHED_LINE = /is running on port \d+/;
/** Each account says when all its doorbells are subscribed, its label first when there are several. */
function subscribedLine({ label, doorbells }: DemoAccount, several: boolean): RegExp {
  return new RegExp(`${several ? `\\[${label}\\] ` : ''}${doorbells.length} of ${doorbells.length} doorbells subscribed`);
}
/** Printed by Homebridge under "Setup Payload:"; a QR code of it pairs as the code does. */
const SETUP_PAYLOAD_LINE = /^X-HM:\/\/\S+$/;

interface DemoOptions {
  dir: string;
  loopbackOnly: boolean;
  accounts: DemoAccount[];
}

function parseOptions(args: string[]): DemoOptions {
  const { values } = parseArgs({
    args,
    options: { loopback: { type: 'boolean' }, dir: { type: 'string' }, accounts: { type: 'string', default: '1' } },
    strict: true,
    allowPositionals: false,
  });
  const count = Number(values.accounts);
  if (!/^\d+$/.test(values.accounts) || count < 1 || count > MAX_DEMO_ACCOUNTS) {
    throw new Error(`--accounts takes a number from 1 to ${MAX_DEMO_ACCOUNTS}.`);
  }
  return { dir: demoDir(values.dir), loopbackOnly: values.loopback === true || process.env.DEMO_LOOPBACK === '1', accounts: demoAccounts(count) };
}

/** What a run has started so far: all of it is stopped at the end, however the run ends. */
interface Started {
  simulator?: Simulator;
  relay?: Relay;
  homebridge?: HomebridgeProcess;
}

/** Runs the demo until a stop signal or Homebridge's own exit; resolves with the exit code. */
async function runDemo(options: DemoOptions, stop: AbortSignal): Promise<number> {
  const started: Started = {};
  try {
    const homebridge = await startDemo(options, stop, started);
    const ending = await Promise.race([homebridge.closed.then(() => 'exited' as const), whenAborted(stop).then(() => 'stopped' as const)]);
    if (ending === 'exited') {
      console.error(`\nHomebridge exited on its own (${homebridge.describeExit()}); its log is above.`);
      return 1;
    }
    return 0;
  } catch (error) {
    if (stop.aborted) {
      return 0;
    }
    console.error(`\nThe demo could not start: ${(error as Error).message}`);
    return 1;
  } finally {
    await release(started, options.dir);
  }
}

/** Starts the simulator and Homebridge, recording each in `started`, and prints the banner once ready. */
async function startDemo(options: DemoOptions, stop: AbortSignal, started: Started): Promise<HomebridgeProcess> {
  if (!currentNodeRunsHomebridge2()) {
    console.log(`Homebridge 2 needs Node ${REQUIRED_NODE_MAJOR}: getting it through npx (the first time, this downloads it)…`);
  }
  const nodeBinary = await resolveNode22Binary();
  stop.throwIfAborted();
  const [first] = options.accounts;
  const simulator = await startSimulator({
    accounts: simulatedDemoAccounts(options.accounts),
    doorbells: first.doorbells.map(({ deviceId }) => deviceId),
    devices: demoDevices(),
  });
  started.simulator = simulator;
  stop.throwIfAborted();
  const relay = await startRelay();
  started.relay = relay;
  stop.throwIfAborted();
  console.log(`Simulated cloud: account service ${simulator.accountUrl}, doorbell service ${simulator.doorbellUrl}`);
  console.log(`Push relay (ntfy protocol, standing in for https://ntfy.sh): ${relay.url}`);
  const bridge = await prepareDemoFolder(options, simulator, relay);
  const homebridge = startHomebridge({
    homebridgeBin: HOMEBRIDGE_2_BIN,
    nodeBinary,
    storagePath: options.dir,
    pluginPath: REPO_ROOT,
    loopbackOnly: options.loopbackOnly,
  });
  started.homebridge = homebridge;
  homebridge.onLine((line) => console.log(`[homebridge] ${line}`));
  console.log(`Starting Homebridge (pid ${homebridge.pid}) with this plugin, storage in ${options.dir}`);
  const setupPayload = await unlessStopped(waitUntilReady(homebridge, options.accounts), stop);
  printReady(bridge, setupPayload, options);
  return homebridge;
}

/** Homebridge first: the plugin then shuts down while the services it talks to still answer. */
async function release({ simulator, relay, homebridge }: Started, dir: string): Promise<void> {
  try {
    await homebridge?.stop(STOP_TIMEOUT_MS);
  } finally {
    await relay?.close();
    await simulator?.close();
    await removeDemoInfo(dir);
  }
}

/** Writes this run's config.json and demo.json, keeping the bridge identity of an earlier run. */
async function prepareDemoFolder({ dir, loopbackOnly, accounts }: DemoOptions, simulator: Simulator, relay: Relay): Promise<BridgeSettings> {
  const identity = await readBridgeIdentity(dir);
  const bridge = { name: BRIDGE_NAME, ...(identity ?? newBridgeIdentity()), port: await freeLoopbackPort() };
  if (await forgetPreviousSession(dir)) {
    console.log('Reusing the demo folder: the plugin signs in to this fresh simulator with a new one-time code; the HomeKit pairing is kept.');
  }
  const platform = demoPlatform(simulator, relay, accounts);
  await writeHomebridgeConfig(dir, { bridge, platforms: [platform], loopbackOnly });
  await writeDemoInfo(dir, { controlUrl: simulator.doorbellUrl, doorbells: accounts.flatMap(({ doorbells }) => doorbells) });
  return bridge;
}

/**
 * Resolves once the bridge is published and the plugin has subscribed every demo doorbell of every
 * account, with the setup payload Homebridge printed on the way.
 */
async function waitUntilReady(homebridge: HomebridgeProcess, accounts: readonly DemoAccount[]): Promise<string | undefined> {
  await expectLine(homebridge, PUBLISHED_LINE, PUBLISH_TIMEOUT_MS, 'Homebridge did not publish the bridge');
  for (const account of accounts) {
    await expectLine(homebridge, subscribedLine(account, accounts.length > 1), SUBSCRIBE_TIMEOUT_MS, `The plugin did not subscribe the doorbells of ${account.email}`);
  }
  return homebridge.lines.find((line) => SETUP_PAYLOAD_LINE.test(line));
}

/** The log above already shows what went wrong, so the error only names the step that failed. */
async function expectLine(homebridge: HomebridgeProcess, pattern: RegExp, timeoutMs: number, failure: string): Promise<void> {
  try {
    await homebridge.waitForLine(pattern, timeoutMs);
  } catch {
    const why = homebridge.running ? ` within ${timeoutMs / 1000} s` : `: Homebridge exited (${homebridge.describeExit()})`;
    throw new Error(`${failure}${why}; see the Homebridge log above.`);
  }
}

function printReady(bridge: BridgeSettings, setupPayload: string | undefined, { dir, loopbackOnly, accounts }: DemoOptions): void {
  const dirFlag = isDefaultDemoDir(dir) ? '' : ` --dir ${dir}`;
  const [first, second] = accounts[0].doorbells;
  const doorbellsOf = ({ doorbells }: DemoAccount): string => doorbells.map(({ deviceId, name }) => `${deviceId} ${name}`).join(', ');
  const pairing = loopbackOnly
    ? 'not advertised on the network (--loopback): run without --loopback to pair with the Home app'
    : `in the Home app on this network: Add Accessory, More options…, "${bridge.name}", then the code above`;
  const lines = [
    '',
    '================ The Doorbell Motion demo is running ================',
    `  HomeKit pairing code  ${bridge.pin}`,
    ...(setupPayload === undefined ? [] : [`  Setup payload         ${setupPayload}  (as a QR code, it pairs too)`]),
    `  Bridge                "${bridge.name}" on port ${bridge.port}`,
    `  Pairing               ${pairing}`,
    ...(accounts.length === 1
      ? [`  Doorbells             ${doorbellsOf(accounts[0])} (simulated)`]
      : accounts.map((account) => `  ${account.label.padEnd(22)}${account.email}, signed in: ${doorbellsOf(account)} (simulated)`)),
    '',
    '  Trigger motion from a second terminal:',
    `      npm run motion -- ${first.deviceId}${dirFlag}`,
    `  and watch for "Motion at ${first.name}" here. The ${second.name} is ${second.deviceId}; add --kind ding to ring.`,
    ...accounts.slice(1).map(({ label, doorbells: [own] }) => `  ${label}'s ${own.name}: npm run motion -- ${own.deviceId}${dirFlag}`),
    ...demoControlsNote(accounts[0].doorbells),
    '  Ctrl-C stops everything.',
    '=====================================================================',
    '',
  ];
  console.log(lines.join('\n'));
}

async function main(): Promise<void> {
  const options = parseCommandLine(parseOptions, USAGE);
  if (options === undefined) {
    return;
  }
  if (!existsSync(PLUGIN_ENTRY)) {
    console.error('The plugin is not built yet: run `npm run build` first (`npm start` does both).');
    process.exitCode = 1;
    return;
  }
  process.exitCode = await runDemo(options, stopSignal());
  if (process.exitCode === 0) {
    console.log('Demo stopped. `npm start` continues where you left off: the HomeKit pairing is kept.');
  }
}

await main();
