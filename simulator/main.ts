/**
 * The simulator as a program of its own (`npm run simulator`), printing each request it answers.
 * The demo and the end-to-end tests do not run this program: they start the simulator in-process
 * with startSimulator() and drive it through the control API on the doorbell server.
 *
 *   --account-port N, --region-port N, --doorbell-port N   fixed ports (default: ephemeral)
 *   --account EMAIL:CODE                                   repeatable (default demo@example.com:123456)
 *   --accounts N                                           N accounts in all: those above, then derived ones
 *   --shared-doorbell ID                                   a doorbell every derived account shares with the first
 *   --latency-ms N                                         answer every request N ms late (default 0)
 */
import { parseArgs } from 'node:util';
import { parseCommandLine } from './cli.js';
import { isDeviceIdText } from './field-checks.js';
import { startSimulator } from './index.js';
import type { RecordedRequest, SimulatedAccount, SimulatedAccountSetup, SimulatedDevice, SimulatorOptions } from './index.js';

const DEFAULT_ACCOUNT: SimulatedAccount = { email: 'demo@example.com', code: '123456' };

/** Enough for any test or demo of several accounts; a typo such as 1000 is refused. */
const MAX_ACCOUNTS = 100;

const USAGE = [
  'usage: simulator [--account-port N] [--region-port N] [--doorbell-port N] [--account EMAIL:CODE]... [--accounts N] [--shared-doorbell ID] [--latency-ms N]',
  '  --account EMAIL:CODE   an account that accepts any doorbell id; repeatable (default demo@example.com:123456)',
  `  --accounts N           N accounts in all (1-${MAX_ACCOUNTS}): the --account ones (or the default) first, then account k is`,
  '                         user<k>@example.com with code k repeated to 6 digits (222222) and doorbells k000001 and k000002',
  '  --shared-doorbell ID   with --accounts: each derived account also has doorbell ID, shared with it by the first',
  '                         account (which accepts any id): a motion on it goes to every account subscribed to it',
  '  --latency-ms N         answer every request N ms late (default 0)',
  'Each account is printed at start with its e-mail, code and doorbells.',
].join('\n');

function parsePort(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) {
    return undefined;
  }
  const port = Number(value);
  if (!/^[0-9]+$/.test(value) || port > 65535) {
    throw new Error(`--${flag} must be a port from 0 to 65535`);
  }
  return port;
}

/** Split at the last ':', since a code never contains one. */
function parseAccount(value: string): SimulatedAccount {
  const separator = value.lastIndexOf(':');
  if (separator <= 0) {
    throw new Error(`--account must be EMAIL:CODE, got ${JSON.stringify(value)}`);
  }
  return { email: value.slice(0, separator), code: value.slice(separator + 1) };
}

function parseOptions(args: string[]): SimulatorOptions {
  const { values } = parseArgs({
    args,
    options: {
      'account-port': { type: 'string' },
      'region-port': { type: 'string' },
      'doorbell-port': { type: 'string' },
      account: { type: 'string', multiple: true },
      accounts: { type: 'string' },
      'shared-doorbell': { type: 'string' },
      'latency-ms': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const given = values.account?.map(parseAccount) ?? [DEFAULT_ACCOUNT];
  const accounts = [...given, ...derivedAccounts(given.length, parseAccountCount(values.accounts, given.length), parseSharedDoorbell(values))];
  const ports = {
    account: parsePort('account-port', values['account-port']),
    region: parsePort('region-port', values['region-port']),
    doorbell: parsePort('doorbell-port', values['doorbell-port']),
  };
  const latency = values['latency-ms'];
  if (latency !== undefined && !/^[0-9]+$/.test(latency)) {
    throw new Error('--latency-ms must be a whole number of milliseconds');
  }
  const latencyMs = latency === undefined ? undefined : Number(latency);
  return { accounts, ports, latencyMs, onRequest: (request) => console.log(describeRequest(request)) };
}

function parseAccountCount(value: string | undefined, given: number): number {
  if (value === undefined) {
    return given;
  }
  const count = Number(value);
  if (!/^[0-9]+$/.test(value) || count < 1 || count > MAX_ACCOUNTS) {
    throw new Error(`--accounts must be a whole number from 1 to ${MAX_ACCOUNTS}`);
  }
  if (count < given) {
    throw new Error(`--accounts ${count} is fewer than the ${given} accounts given with --account`);
  }
  return count;
}

function parseSharedDoorbell(values: { accounts?: string; 'shared-doorbell'?: string }): string | undefined {
  const id = values['shared-doorbell'];
  if (id === undefined) {
    return undefined;
  }
  if (values.accounts === undefined) {
    throw new Error('--shared-doorbell goes with --accounts');
  }
  if (!isDeviceIdText(id)) {
    throw new Error('--shared-doorbell must be a doorbell id: a decimal integer from 1 to 9223372036854775807');
  }
  return id;
}

/** Accounts `from + 1` to `count` (counting from 1), each with two doorbells of its own and the shared one. */
function derivedAccounts(from: number, count: number, shared: string | undefined): SimulatedAccountSetup[] {
  const accounts: SimulatedAccountSetup[] = [];
  for (let k = from + 1; k <= count; k += 1) {
    const own = [1, 2].map((n) => String(k * 1_000_000 + n));
    const sharedWithIt = shared === undefined || own.includes(shared) ? [] : [shared];
    const devices: SimulatedDevice[] = [
      ...own.map((id, index): SimulatedDevice => ({ list: 'doorbots', id, description: `User ${k} Door ${index + 1}`, kind: 'lpd_v2' })),
      ...sharedWithIt.map((id): SimulatedDevice => ({ list: 'authorized_doorbots', id, description: `Shared Door ${id}`, kind: 'lpd_v2' })),
    ];
    accounts.push({ email: `user${k}@example.com`, code: String(k).repeat(6).slice(0, 6), doorbells: [...own, ...sharedWithIt], devices });
  }
  return accounts;
}

/** One line per account: what a tester needs to sign in and to send motions. */
function describeAccount({ email, code, doorbells }: SimulatedAccountSetup): string {
  return `  ${email}  code ${code}  doorbells ${doorbells === undefined ? 'any id' : doorbells.join(', ')}`;
}

function describeRequest(request: RecordedRequest): string {
  const line = `${request.service} ${request.method} ${request.path} -> ${request.status === 0 ? 'reset' : request.status}`;
  return request.problems.length === 0 ? line : `${line}\n  problems: ${request.problems.join('; ')}`;
}

async function main(): Promise<void> {
  const options = parseCommandLine(parseOptions, USAGE);
  if (options === undefined) {
    return;
  }
  const simulator = await startSimulator(options);
  console.log(`account   ${simulator.accountUrl}`);
  console.log(`region    ${simulator.regionUrl}`);
  console.log(`doorbell  ${simulator.doorbellUrl}`);
  console.log(`accounts  ${options.accounts?.map((account) => account.email).join(', ')}`);
  options.accounts?.forEach((account) => console.log(describeAccount(account)));
  console.log(`control   POST ${simulator.doorbellUrl}/__simulator/motion/<deviceId>, GET ${simulator.doorbellUrl}/__simulator/state`);
  const stop = (): void => {
    void simulator.close().then(() => console.log('simulator closed'));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

try {
  await main();
} catch (error) {
  console.error(`simulator failed to start: ${(error as Error).message}`);
  process.exitCode = 1;
}
