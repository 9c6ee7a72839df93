/**
 * The results: bench-results.json for whoever compares runs, and a Markdown table for people (the
 * table in docs/performance.md is a pasted one). Targets are shown beside the figures and never
 * decide the exit code: a benchmark reports, it does not judge.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { writeFile } from 'node:fs/promises';
import type { BurstFigure } from './burst.js';
import type { LatencyFigure, PathLatency } from './latency.js';
import type { MatterFigure } from './matter.js';
import type { AddedFigure, MemoryFigure, MemoryPhase, Spread } from './memory.js';
import type { DirectPhase, HomebridgePhase, RelayPhase } from './phases.js';
import type { AccountsStartupFigure, StartupFigure, WarmRestartFigure } from './startup.js';
import { HOMEBRIDGE_2_VERSION } from '../lib/homebridge-versions.js';
import { NETWORK_ENV } from './private-network.js';
import { CLOUD_LATENCY_MS, type BenchSettings } from './settings.js';


export interface Machine {
  cores: number;
  cpu: string;
  memoryGb: number;
  node: string;
  /** The 1, 5 and 15 minute load averages when the run began: other work on the machine shows here. */
  loadAverage: number[];
  /** True when the benchmark ran in a network namespace of its own, where only its loopback is. */
  privateNetwork: boolean;
}

export function describeMachine(): Machine {
  const cores = cpus();
  return {
    cores: cores.length,
    cpu: cores[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    loadAverage: loadavg().map((load) => Math.round(load * 100) / 100),
    privateNetwork: process.env[NETWORK_ENV] === 'private',
  };
}

const METHODS = {
  startup:
    'in this process: the real platform with real HAP objects (the test harness), relay mode through the loopback relay, fresh storage and a sign-in with account.code, ' +
    'timed by the simulator from the first request it receives to its answer to the last subscription; the relay stream opens between login and registration on that clock. ' +
    'accounts: the 100 doorbells in 10 accounts of 10 (a platform block\'s accounts), each its own sign-in, after the other start-ups, against the same ideal; ' +
    'started in turn with one account of the 100 (3 times each in a full run, the first alternating), each figure its median run; ' +
    'with when the cloud answered the last region, login and registration call and the first subscription. ' +
    `homebridge: the same on a real Homebridge ${HOMEBRIDGE_2_VERSION} child in direct mode, cold`,
  warmRestart: 'in this process, the same storage and cached accessories: from the first request (the registration) to the last subscription answered',
  latency:
    'from the POST leaving the sender (the simulator, as the doorbell cloud) to the change, every doorbell with both switches and the three detection sensors: ' +
    'rings (the Doorbell service\'s ProgrammableSwitchEvent, which fires every time, the Chime on) round the doorbells, one at a time; ' +
    'motion: MotionDetected turning true, once per doorbell (it falls back only after motionTimeout, at least 5 s); personMotion: a person\'s motion, the person sensor turning true, once per doorbell; ' +
    'ringChimeOff: as many rings with every Chime switch turned off, the programmable switch\'s event (the only one left). ' +
    `inProcess: direct mode, the characteristic change event in this process; homekit: a real Homebridge ${HOMEBRIDGE_2_VERSION} child, the HAP event at a paired hap-controller; ` +
    'relay: in this process, through the loopback ntfy relay',
  burst: 'in this process, direct mode: rings as fast as the sender delivers them (a new connection each), counted at the doorbell service; heap after GC, before and after',
  memory:
    `real Homebridge ${HOMEBRIDGE_2_VERSION} child processes (--expose-gc, -D), one at a time: without the plugin; with it in the default set-up (relay mode, default doorbells, ` +
    'signed in on the settings page by its own server code), with 1 doorbell and with all; with all again, each with a battery in the doorbell list (a Battery service each); ' +
    'with all carrying every control; the five again in turn for every run. ' +
    'Each is read once every doorbell is subscribed and the launch\'s doorbell list read has answered, and its heap has settled (two GCs every 500 ms until three readings lie within 64 KiB; at most 30 s): heap used + external, then the RSS ' +
    'as V8 held it and after a memory-reducing GC that gives back the young generation V8 grew. A run\'s overhead is the plugin\'s reading less the bare Homebridge\'s ' +
    'of the same run; heap: the median of the runs; RSS: min / median / max. What the batteries add: each run\'s reading with them less its reading of all without',
  matter:
    `a real Homebridge ${HOMEBRIDGE_2_VERSION} child with Matter on, in a private network namespace (the Matter tests' setup), direct mode, occupancy sensors only, commissioned by a matter.js controller; ` +
    'one motion alert per doorbell per round, one at a time. plugin: the plugin\'s own debug line, from the notification accepted (before HomeKit is updated) ' +
    'to the Matter update confirmed by getAccessoryState; controller: from the POST leaving the sender to the occupancy report at the controller, matter.js\'s reporting delay and the ' +
    'Unix-socket tunnel into the namespace included',
};

export interface Phases {
  relay: RelayPhase;
  direct: DirectPhase;
  homebridge: HomebridgePhase;
  matter: MatterFigure;
  memory: MemoryPhase;
}

export function resultsOf(settings: BenchSettings, { relay, direct, homebridge, matter, memory }: Phases, machine: Machine, durationS: number) {
  return {
    quick: settings.quick,
    cloudLatencyMs: CLOUD_LATENCY_MS,
    startup: { ...relay.startup, accounts: relay.accountsStartup, homebridge: { ...homebridge.startup, doorbells: settings.doorbells }, method: METHODS.startup },
    warmRestart: { ...relay.warmRestart, method: METHODS.warmRestart },
    latency: { inProcess: direct.inProcessLatency, homekit: homebridge.homekitLatency, relay: relay.relayLatency, method: METHODS.latency },
    burst: { ...direct.burst, doorbells: settings.doorbells, method: METHODS.burst },
    matter: { ...matter, method: METHODS.matter },
    memory: { ...memory, method: METHODS.memory },
    machine,
    durationS,
  };
}

export type BenchResults = ReturnType<typeof resultsOf>;

export async function writeResults(path: string, results: BenchResults): Promise<void> {
  await writeFile(path, `${JSON.stringify(results, null, 2)}\n`);
}

const met = (ok: boolean): string => (ok ? 'met' : '**missed**');

function latencyText({ n, p50Ms, p95Ms, p99Ms }: LatencyFigure): string {
  return `p50 ${p50Ms} / p95 ${p95Ms} / p99 ${p99Ms} ms (n = ${n})`;
}

function pathText(latency: PathLatency): string {
  return (
    `rings ${latencyText(latency)}; rings with Chime off ${latencyText(latency.ringChimeOff)}; ` +
    `motion ${latencyText(latency.motion)}; a person's motion ${latencyText(latency.personMotion)}`
  );
}

function spreadText({ min, median, max }: Spread): string {
  return `${signed(median)} MiB (${signed(min)} to ${signed(max)})`;
}

const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value}`;

function memoryText({ heapOverheadMb, heapOverheadSpreadMb, rssOverheadMb, rssHeldOverheadMb }: MemoryFigure): string {
  return (
    `heap + external ${signed(heapOverheadMb)} MiB (runs within ${heapOverheadSpreadMb} MiB); RSS ${spreadText(rssOverheadMb)}; ` +
    `RSS before V8 gives back its spare young generation ${spreadText(rssHeldOverheadMb)}`
  );
}

function addedText({ heapMb, heapSpreadMb, rssMb }: AddedFigure): string {
  return `heap + external ${signed(heapMb)} MiB (runs within ${heapSpreadMb} MiB); RSS ${spreadText(rssMb)}`;
}

/** At most this much heap + external for a battery on each of the 100 doorbells. */
const BATTERIES_TARGET_MB = 0.3;

function burstText({ sent, accepted, lost, perSecond, heapGrowthMb }: BurstFigure): string {
  return `${sent} sent, ${accepted} accepted, ${lost} lost, ${perSecond}/s, heap ${heapGrowthMb >= 0 ? '+' : ''}${heapGrowthMb} MB`;
}

/** The memory figures' rows of the table. */
function memoryRows(memory: MemoryPhase): Array<[string, string, string]> {
  return [
    ['memory, Homebridge alone', `heap + external ${memory.homebridge.heapMb} MiB; RSS ${memory.homebridge.rssMb.median} MiB (${memory.homebridge.rssMb.min} to ${memory.homebridge.rssMb.max})`, ''],
    ['memory added, 1 doorbell', memoryText(memory.n1), ''],
    [
      `memory added, ${memory.n100.doorbells} doorbells`,
      memoryText(memory.n100),
      `heap + external ≤ 10 MiB, RSS median ≤ 20 MiB: ${met(memory.n100.heapOverheadMb <= 10 && memory.n100.rssOverheadMb.median <= 20)}`,
    ],
    [`memory added, ${memory.batteries.doorbells} doorbells with a battery each`, memoryText(memory.batteries), ''],
    [
      `batteries on ${memory.batteries.doorbells} doorbells, against none`,
      addedText(memory.batteriesAdded),
      `heap + external ≤ ${BATTERIES_TARGET_MB} MiB: ${met(memory.batteriesAdded.heapMb <= BATTERIES_TARGET_MB)}`,
    ],
    ...(memory.everyControl === undefined ? [] : [[`memory added, ${memory.everyControl.doorbells} doorbells with every control`, memoryText(memory.everyControl), ''] as [string, string, string]]),
  ];
}

/** The memory figures alone (`--only memory`): their rows, and the run's machine and load. */
export function formatMemoryTable(memory: MemoryPhase, machine: Machine, durationS: number): string {
  return [
    `memory only, ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, load average ${machine.loadAverage.join(' ')} at the start; ` +
      `memory: ${memory.runs} run(s)${memory.settled ? '' : ', some heap still changing at the time limit'}; ${durationS} s`,
    '',
    '| figure | result | target |',
    '|---|---|---|',
    ...memoryRows(memory).map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
}

type InProcessStartup = RelayPhase['startup'] & { accounts: RelayPhase['accountsStartup'] };

function startupText({ ms, idealMs, efficiency, cloudAnswerMs }: StartupFigure): string {
  return `${ms} ms (ideal ${idealMs} ms): efficiency ${efficiency}; the cloud answered in ${cloudAnswerMs} ms on average`;
}

/** The start-up rows measured in this process: one account of 1, 10 and 100 doorbells, then 100 in several accounts. */
function startupRows(startup: InProcessStartup): Array<[string, string, string]> {
  const { accounts } = startup;
  return [
    ['start-up, 1 doorbell', startupText(startup.n1), ''],
    ['start-up, 10 doorbells', startupText(startup.n10), ''],
    ['start-up, 100 doorbells', startupText(startup.n100), `efficiency ≥ 0.95: ${met(startup.n100.efficiency >= 0.95)}`],
    [
      `start-up, ${accounts.accounts} accounts × ${accounts.doorbellsPerAccount} doorbells`,
      `${startupText(accounts)}; ${comparisonText(accounts)}; last region answered at ${accounts.calls.lastRegionMs} ms, last login at ${accounts.calls.lastLoginMs} ms, ` +
        `registrations from ${accounts.calls.firstRegistrationMs} to ${accounts.calls.lastRegistrationMs} ms (sent at ${accounts.calls.registrationArrivalsMs.join(', ')} ms), ` +
        `first subscription at ${accounts.calls.firstSubscriptionMs} ms; ${listReadsText(accounts.calls.listReadArrivalsMs)}`,
      `within 0.02 of 100 doorbells in one account: ${met(accounts.efficiency >= accounts.oneAccount.efficiency - 0.02)}`,
    ],
  ];
}

/** The doorbell list reads that went through the request slots before the last subscription. */
function listReadsText(arrivalsMs: readonly number[]): string {
  return arrivalsMs.length === 0 ? 'no doorbell list read in the same slots' : `${arrivalsMs.length} doorbell list reads in the same slots (sent at ${arrivalsMs.join(', ')} ms)`;
}

/** The runs behind the several accounts' figure and the one account's it is held to. */
function comparisonText({ oneAccount, runsMs }: AccountsStartupFigure): string {
  const runs = (times: readonly number[]): string => `${times.length} run${times.length === 1 ? '' : 's'} (${times.join(', ')} ms)`;
  return (
    `the median of ${runs(runsMs.accounts)}, started in turn with one account of as many doorbells: ` +
    `${oneAccount.ms} ms, efficiency ${oneAccount.efficiency}, the median of ${runs(runsMs.oneAccount)}`
  );
}

function warmRestartRow(warmRestart: WarmRestartFigure): [string, string, string] {
  return [
    'warm restart, 100 doorbells',
    `${warmRestart.logins} logins, ${warmRestart.ms} ms (ideal ${warmRestart.idealMs} ms); the cloud answered in ${warmRestart.cloudAnswerMs} ms on average`,
    `no login: ${met(warmRestart.logins === 0)}`,
  ];
}

/** The start-up figures alone (`--only startup`): their rows, and the run's machine and load. */
export function formatStartupTable(startup: InProcessStartup, warmRestart: WarmRestartFigure, machine: Machine, durationS: number): string {
  return [
    `start-up only, cloud latency ${CLOUD_LATENCY_MS} ms; ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, load average ${machine.loadAverage.join(' ')} at the start; ${durationS} s`,
    '',
    '| figure | result | target |',
    '|---|---|---|',
    ...[...startupRows(startup), warmRestartRow(warmRestart)].map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
}

/** The Markdown table, with the machine above it and how each figure was taken below it. */
export function formatTable(results: BenchResults): string {
  const { startup, warmRestart, latency, burst, memory, matter, machine } = results;
  const rows: Array<[string, string, string]> = [
    ...startupRows(startup),
    [`start-up, ${startup.homebridge.doorbells} doorbells, real Homebridge`, startupText(startup.homebridge), ''],
    warmRestartRow(warmRestart),
    ['latency in process', pathText(latency.inProcess), ''],
    ['latency through HomeKit', pathText(latency.homekit), `p99 ≤ 5 ms: ${met(latency.homekit.p99Ms <= 5)}`],
    ['latency through the relay', pathText(latency.relay), ''],
    [`Matter, the plugin's own work, ${matter.doorbells} doorbells`, `motion ${latencyText(matter.plugin)}`, `p99 ≤ 5 ms: ${met(matter.plugin.p99Ms <= 5)}`],
    [`latency through Matter, ${matter.doorbells} doorbells`, `motion ${latencyText(matter.controller)}`, ''],
    [`burst, ${burst.doorbells} doorbells`, burstText(burst), `0 lost, heap ≤ 20 MB: ${met(burst.lost === 0 && burst.heapGrowthMb <= 20)}`],
    ...memoryRows(memory),
    ['benchmark run', `${results.durationS} s`, `< 5 min: ${met(results.durationS < 300)}`],
  ];
  const lines = [
    `${results.quick ? 'Quick run (not for comparison): ' : ''}cloud latency ${results.cloudLatencyMs} ms; ${machine.cores} cores (${machine.cpu}), ` +
      `${machine.memoryGb} GB, Node ${machine.node}, load average ${machine.loadAverage.join(' ')} at the start; ` +
      `${machine.privateNetwork ? 'in a network namespace of its own' : 'on the machine\'s own network (no private network namespace here)'}; ` +
      `memory: ${memory.runs} run(s)${memory.settled ? '' : ', some heap still changing at the time limit'}`,
    '',
    '| figure | result | target |',
    '|---|---|---|',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
    '',
    ...Object.entries(METHODS).map(([figure, method]) => `- ${figure}: ${method}`),
  ];
  return lines.join('\n');
}
