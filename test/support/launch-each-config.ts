/**
 * Runs generated platform blocks (test/support/config-arbitrary.ts) through the configuration check
 * and a launched platform, one after another in this process: real HAP, `didFinishLaunching`, a moment
 * of running, Homebridge's `shutdown`, each in a storage of its own, removed at the end. A property of
 * fast-check, it fails on anything that escapes: a throw from the check, the constructor, the launch
 * or the shutdown, and every uncaughtException or unhandledRejection of this process while a platform
 * runs or shortly after; on a refused block that publishes or reaches the network; on traffic that
 * would leave this machine; and on a timer or socket still held seconds after the shutdown.
 *
 * It runs as a process of its own, started by test/config/launched-platform.property.test.ts under tsx
 * with the loopback guard preloaded (every listen on loopback, `.invalid` answered here), because only
 * a process of its own has the real `process` to listen on for what escapes: jest gives a test a
 * stand-in. Its argument is the property's weight, which sets how many blocks it launches (see
 * test/support/property-runs.ts). The last line it prints is `RESULT <json>`: the counts, and on
 * failure fast-check's report with the seed and path that replay it (FC_SEED, FC_PATH).
 */
import fc from 'fast-check';
import dns from 'node:dns';
import { mkdtemp, rm } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import type { PlatformConfig } from 'homebridge';
import { parseConfig } from '../../src/config/parse-config.js';
import { platformBlock, type GeneratedBlock } from './config-arbitrary.js';
import { heldResources, untilReleased } from './held-resources.js';
import { delay, launchPlatform } from '../../scripts/lib/platform-harness.js';
import { propertyRuns } from './property-runs.js';

/** Long enough for a stopped platform's last timers and sockets; past it, what is left is a leak. */
const SETTLE_TIMEOUT_MS = 3_000;

/** Before the storages go: time for the files stopped platforms were still writing. */
const LAST_WRITES_MS = 300;

/** After everything is released: time for an error queued by the shutdown to surface. */
const SHORTLY_AFTER_MS = 2;

export interface LaunchCounts {
  launched: number;
  accepted: number;
  refused: number;
  unconfigured: number;
  /** Connections the plugin opened: proof that accepted blocks reach the (loopback) network. */
  connections: number;
}

// HAP-NodeJS warns on the console of each odd name it is given, thousands of lines in a run: that is
// the business of the name tests; here it would only cost time.
const silent = () => undefined;
Object.assign(console, { log: silent, info: silent, warn: silent, error: silent, debug: silent });

const escaped: unknown[] = [];
process.on('uncaughtException', (error) => escaped.push(error));
process.on('unhandledRejection', (reason) => escaped.push(reason));

const activity = { connections: 0, listens: 0, strays: [] as string[] };
const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
/** localhost, 127.0.0.0/8 and ::1, written either way (BlockList takes `::ffff:7f00:1` for 127.0.0.1). */
const isLoopback = (host: string) => host === 'localhost' || (net.isIP(host) !== 0 && LOOPBACK.check(host, net.isIPv4(host) ? 'ipv4' : 'ipv6'));
const isInvalidName = (host: string) => /(^|\.)invalid\.?$/i.test(host);

/** Every connection the process opens, and the host it goes to: only loopback or a name that never resolves. */
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function countedConnect(this: net.Socket, ...args: unknown[]) {
  const [first, second] = args;
  const options = (Array.isArray(first) ? first[0] : first) as { host?: unknown; path?: unknown; port?: unknown } | undefined;
  const host = typeof options === 'object' && options !== null ? options.host : second;
  // A Unix socket has a path and no port; node:http's connections carry the request's path too, with a port.
  const ipc = typeof options === 'object' && options !== null && options.path !== undefined && options.port === undefined;
  if (!ipc) {
    activity.connections += 1;
    if (typeof host === 'string' && !isLoopback(host) && !isInvalidName(host)) {
      activity.strays.push(`a connection to ${host}`);
    }
  }
  return (connect as (...values: unknown[]) => net.Socket).apply(this, args);
} as typeof connect;

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function countedListen(this: net.Server, ...args: unknown[]) {
  activity.listens += 1;
  return (listen as (...values: unknown[]) => net.Server).apply(this, args);
} as typeof listen;

/** A name looked up anywhere but here would leave the machine. */
const lookup = dns.lookup;
dns.lookup = function checkedLookup(this: unknown, hostname: string, ...rest: unknown[]) {
  if (!isLoopback(hostname) && !isInvalidName(hostname)) {
    activity.strays.push(`a DNS lookup of ${hostname}`);
  }
  return (lookup as (...values: unknown[]) => unknown).call(this, hostname, ...rest);
} as typeof lookup;
syncBuiltinESMExports();

/** A sink on loopback: generated addresses point here, so what the plugin sends reaches a port this process owns. */
async function startSink(): Promise<net.Server> {
  const sink = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  return sink;
}

/** What every launch shares: the sink's port, what the process held before, the storages' parent folder, the counts. */
interface Bench {
  ownPort: number;
  baseline: readonly string[];
  storages: string;
  counts: LaunchCounts;
}

async function launchOnce({ block, acceptable }: GeneratedBlock, runMs: number, { baseline, storages, counts }: Bench): Promise<void> {
  const escapedBefore = escaped.length;
  const before = { ...activity, strays: activity.strays.length };
  const result = parseConfig(structuredClone(block));
  if (acceptable && result.status !== 'ok') {
    throw new Error(`a block the schema takes, unknown keys aside, was refused: ${JSON.stringify(result)}`);
  }
  counts.launched += 1;
  counts[result.status === 'ok' ? 'accepted' : result.status === 'invalid' ? 'refused' : 'unconfigured'] += 1;
  const running = launchPlatform(block as PlatformConfig, await mkdtemp(join(storages, 'run-')));
  await delay(runMs);
  running.test.shutdown();
  await untilReleased(baseline, SETTLE_TIMEOUT_MS);
  if (result.status !== 'ok' && (running.test.registered.size > 0 || activity.connections > before.connections || activity.listens > before.listens)) {
    throw new Error(`a ${result.status} block published accessories or reached the network`);
  }
  await delay(SHORTLY_AFTER_MS);
  counts.connections += activity.connections - before.connections;
  if (activity.strays.length > before.strays) {
    throw new Error(`traffic that would leave this machine: ${activity.strays.slice(before.strays).join(', ')}`);
  }
  if (escaped.length > escapedBefore) {
    throw escaped[escapedBefore];
  }
}

/** Of a report: a counterexample can hold 20,000-character strings. */
const REPORT_CHARS = 6_000;

/** fast-check's report (seed, path, counterexample, shortened) and what the property threw, with its stack. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) {
    return String(error);
  }
  const report = error.message.length > REPORT_CHARS ? `${error.message.slice(0, REPORT_CHARS)} [... ${error.message.length - REPORT_CHARS} more characters]` : error.message;
  const cause = error.cause instanceof Error ? `\n\nWhat escaped: ${error.cause.stack ?? error.cause.message}` : '';
  return `${report}${cause}`;
}

async function main(): Promise<void> {
  const sink = await startSink();
  // Each launch gets a storage of its own in here. A stopped platform may still finish writing a file
  // it began before the shutdown (Homebridge exits after that), so they are removed together at the end.
  const storages = await mkdtemp(join(tmpdir(), 'doorbell-motion-launches-'));
  const bench: Bench = {
    ownPort: (sink.address() as net.AddressInfo).port,
    baseline: heldResources(),
    storages,
    counts: { launched: 0, accepted: 0, refused: 0, unconfigured: 0, connections: 0 },
  };
  let failure: string | undefined;
  try {
    await fc.assert(
      fc.asyncProperty(platformBlock(bench), fc.constantFrom(0, 2, 15), (generated, runMs) => launchOnce(generated, runMs, bench)),
      propertyRuns(Number(process.argv[2])),
    );
  } catch (error) {
    failure = describe(error);
  }
  await delay(LAST_WRITES_MS);
  await rm(storages, { recursive: true, force: true, maxRetries: 10 });
  await new Promise((resolve) => sink.close(resolve));
  process.stdout.write(`RESULT ${JSON.stringify({ counts: bench.counts, failure })}\n`);
}

await main();
