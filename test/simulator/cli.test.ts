import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { json, send } from './http.js';

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Starts `npm run simulator` the way npm does (tsx), with the test's Node. */
function startCli(args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts', ...args], { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return { child, output: () => output };
}

/** Waits until the output matches, the process exits or 15 seconds pass. */
async function waitForOutput(cli: ReturnType<typeof startCli>, pattern: RegExp): Promise<RegExpMatchArray> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && cli.child.exitCode === null) {
    const match = pattern.exec(cli.output());
    if (match) {
      return match;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no ${pattern} in simulator output:\n${cli.output()}`);
}

async function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) {
    return child.exitCode;
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return code;
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
      cli.child.kill('SIGTERM');
    }

    expect(await exitCode(cli.child)).toBe(0);
    expect(cli.output()).toContain('simulator closed');
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
      cli.child.kill('SIGTERM');
    }
    expect(await exitCode(cli.child)).toBe(0);
  });

  it.each([
    ['an unknown flag', ['--verbose']],
    ['a bad port', ['--region-port', '70000']],
    ['an account without code', ['--account', 'demo@example.com']],
  ])('exits with 2 and the usage on %s', async (_name, args) => {
    const cli = startCli(args);

    expect(await exitCode(cli.child)).toBe(2);
    expect(cli.output()).toContain('usage: simulator');
  });
});
