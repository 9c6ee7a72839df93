import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HomebridgeProcess } from '../../scripts/lib/homebridge-process.js';
import { withTimeout } from '../../scripts/lib/timeout.js';
import { json, send } from './http.js';

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));

const OUTPUT_TIMEOUT_MS = 15_000;
/** SIGTERM closes the servers at once; a usage error exits before any is started. */
const EXIT_TIMEOUT_MS = 10_000;

/** Starts `npm run simulator` the way npm does (tsx), with the test's Node. */
function startCli(args: string[]): HomebridgeProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts', ...args], { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  return new HomebridgeProcess(child, 'The simulator');
}

/** Waits until an output line matches; fails when the process exits or 15 seconds pass first. */
function waitForOutput(cli: HomebridgeProcess, pattern: RegExp): Promise<RegExpMatchArray> {
  return cli.waitForLine(pattern, OUTPUT_TIMEOUT_MS);
}

/** The exit code once the process has exited by itself, as on a usage error. */
async function exitCode(cli: HomebridgeProcess): Promise<number | null> {
  await withTimeout(cli.closed, EXIT_TIMEOUT_MS, 'the simulator exit');
  return cli.exitCode;
}

/** Everything it printed on stdout and stderr. */
function output(cli: HomebridgeProcess): string {
  return cli.lines.join('\n');
}

describe('simulator: command line', () => {
  it('prints the three URLs, serves the default account and the control API, and closes on SIGTERM', async () => {
    const cli = startCli([]);
    try {
      const [, accountUrl] = await waitForOutput(cli, /^account\s+(http:\/\/127\.0\.0\.1:\d+)$/m);
      const [, doorbellUrl] = await waitForOutput(cli, /^doorbell\s+(http:\/\/127\.0\.0\.1:\d+)$/m);
      await waitForOutput(cli, /^region\s+http:\/\/127\.0\.0\.1:\d+$/m);

      const region = await send(`${accountUrl}/api/v1/getUrlByEmail?email=demo%40example.com&needtwostepauth=false`);
      expect(json(region)).toMatchObject({ code: 200 });
      const state = json(await send(`${doorbellUrl}/__simulator/state`, { method: 'GET' }));
      expect(state).toMatchObject({ pushToken: null, requestCounts: { region: 1 } });
      await waitForOutput(cli, /^account POST \/api\/v1\/getUrlByEmail -> 200$/m);
    } finally {
      await cli.stop(EXIT_TIMEOUT_MS);
    }

    expect(cli.exitCode).toBe(0);
    expect(output(cli)).toContain('simulator closed');
  });

  it('serves the accounts given with --account on the given port', async () => {
    const cli = startCli(['--account', 'x+y@example.com:000111', '--account-port', '0']);
    try {
      const [, accountUrl] = await waitForOutput(cli, /^account\s+(http:\S+)$/m);
      const known = await send(`${accountUrl}/api/v1/getUrlByEmail?email=x%2By%40example.com&needtwostepauth=false`);
      const dropped = await send(`${accountUrl}/api/v1/getUrlByEmail?email=demo%40example.com&needtwostepauth=false`);

      expect(json(known)).toMatchObject({ code: 200 });
      expect(json(dropped)).toMatchObject({ code: 2008 });
    } finally {
      await cli.stop(EXIT_TIMEOUT_MS);
    }
    expect(cli.exitCode).toBe(0);
  });

  it.each([
    ['an unknown flag', ['--verbose']],
    ['a bad port', ['--region-port', '70000']],
    ['an account without code', ['--account', 'demo@example.com']],
  ])('exits with 2 and the usage on %s', async (_name, args) => {
    const cli = startCli(args);

    expect(await exitCode(cli)).toBe(2);
    expect(output(cli)).toContain('usage: simulator');
  });
});
