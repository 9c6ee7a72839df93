/**
 * The simulator as a program of its own (`npm run simulator`), printing each request it answers.
 * The demo and the end-to-end tests do not run this program: they start the simulator in-process
 * with startSimulator() and drive it through the control API on the doorbell server.
 *
 *   --account-port N, --region-port N, --doorbell-port N   fixed ports (default: ephemeral)
 *   --account EMAIL:CODE                                   repeatable (default demo@example.com:123456)
 *   --latency-ms N                                         answer every request N ms late (default 0)
 */
import { parseArgs } from 'node:util';
import { parseCommandLine } from './cli.js';
import { startSimulator } from './index.js';
import type { RecordedRequest, SimulatedAccount, SimulatorOptions } from './index.js';

const DEFAULT_ACCOUNT: SimulatedAccount = { email: 'demo@example.com', code: '123456' };

const USAGE = 'usage: simulator [--account-port N] [--region-port N] [--doorbell-port N] [--account EMAIL:CODE]... [--latency-ms N]';

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
      'latency-ms': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const accounts = values.account?.map(parseAccount) ?? [DEFAULT_ACCOUNT];
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
