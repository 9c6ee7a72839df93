import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { HomebridgeProcess } from '../../scripts/lib/homebridge-process.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { withTimeout } from '../../scripts/lib/timeout.js';
import { startSimulator } from '../../simulator/index.js';
import type { Fault, RouteName, Simulator } from '../../simulator/index.js';
import { useSimulator } from '../support/each-test.js';
import { send, json, ACCOUNT, register, registrationBody, regionUrl, signIn, login, loginForm, subscribe } from './requests.js';

/** How many TCP sockets and servers are alive in this process. */
function networkHandles(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap' || kind === 'TCPSocketWrap').length;
}

/**
 * Handles close a moment after their owner did; waits up to a second for the count to fall back to
 * `baseline`. It may fall below it: other test files of the same worker may still be closing theirs.
 */
async function settledNetworkHandles(baseline: number): Promise<number> {
  for (let attempt = 0; attempt < 50 && networkHandles() > baseline; attempt += 1) {
    await sleep(20);
  }
  return networkHandles();
}

/**
 * Makes one request through `agent` and reads its answer, so that the connection then idles in the
 * agent's keep-alive pool (which server.close() alone would wait on); `closed` resolves when it closes.
 */
async function idleKeepAliveConnection(simulator: Simulator, agent: Agent): Promise<{ closed: Promise<unknown> }> {
  const outgoing = request(regionUrl(simulator), { method: 'POST', agent }).end();
  const [socket] = (await once(outgoing, 'socket')) as [Socket];
  const [response] = (await once(outgoing, 'response')) as [IncomingMessage];
  await once(response.resume(), 'end');
  return { closed: once(socket, 'close') };
}

describe('simulator: lifecycle', () => {
  it('closes all servers and idle keep-alive connections promptly, leaving no handle behind', async () => {
    const baseline = networkHandles();
    const simulator = await startSimulator({ accounts: [ACCOUNT] });
    const agent = new Agent({ keepAlive: true });
    try {
      const { closed: socketClosed } = await idleKeepAliveConnection(simulator, agent);

      const started = Date.now();
      await simulator.close();

      // Before Node's 5 s keep-alive timeout would have closed the connection, however busy the machine.
      expect(Date.now() - started).toBeLessThan(4000);
      await socketClosed;
      await expect(send(regionUrl(simulator))).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      agent.destroy();
      await simulator.close();
    }
    expect(await settledNetworkHandles(baseline)).toBeLessThanOrEqual(baseline);
  });

  it('closes idle keep-alive connections on closeIdleConnections(), and goes on serving', async () => {
    const simulator = await startSimulator({ accounts: [ACCOUNT] });
    const agent = new Agent({ keepAlive: true });
    try {
      const { closed: socketClosed } = await idleKeepAliveConnection(simulator, agent);

      simulator.closeIdleConnections();

      await socketClosed;
      expect((await send(regionUrl(simulator))).status).toBe(200);
    } finally {
      agent.destroy();
      await simulator.close();
    }
  });

  it('closes a connection whose request is still arriving', async () => {
    const simulator = await startSimulator();
    const { hostname, port } = new URL(simulator.accountUrl);
    const socket = createConnection({ host: hostname, port: Number(port) });
    try {
      await once(socket, 'connect');
      socket.write('POST /api/v1/getUrlByEmail HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"half":');
      const socketClosed = once(socket, 'close');
      await sleep(50);

      const started = Date.now();
      await simulator.close();

      // Long before Node's own timeouts for a request that never finishes (a minute and more), however busy the machine.
      expect(Date.now() - started).toBeLessThan(4000);
      await socketClosed;
    } finally {
      socket.destroy();
      await simulator.close();
    }
  });

  it('ends a pending fault delay and an unanswered delivery on close()', async () => {
    const baseline = networkHandles();
    const simulator = await startSimulator({ accounts: [ACCOUNT] });
    // The push token points at a route of a second simulator that is delayed for a minute: a receiver that never answers.
    const silent = await startSimulator();
    try {
      silent.injectFault('subscribe', { delayMs: 60_000 });
      await register(simulator, await signIn(simulator), registrationBody(`${silent.doorbellUrl}/clients_api/doorbots/1/motions_subscribe`));
      simulator.injectFault('region', { delayMs: 60_000 });
      const delayed = send(regionUrl(simulator));
      const delivery = simulator.deliverMotion('1234567');
      // Both held: the request recorded on arrival, the delivery's at the silent receiver.
      const arrived = () => simulator.requestsTo('region').length === 1 && silent.requestsTo('subscribe').length === 1;
      await pollUntil(arrived, Boolean, 5_000, 'the delayed request and the delivery');

      await simulator.close();

      await expect(delayed).rejects.toThrow();
      expect(await delivery).toEqual({ status: 0, body: '' });
      expect(simulator.requestsTo('region')[0].status).toBe(0);
    } finally {
      await silent.close();
    }
    expect(await settledNetworkHandles(baseline)).toBeLessThanOrEqual(baseline);
  });

  it('refuses a non-loopback bind address', async () => {
    await expect(startSimulator({ host: '0.0.0.0' })).rejects.toThrow('loopback addresses only');
    await expect(startSimulator({ host: '192.168.1.20' })).rejects.toThrow('loopback addresses only');
  });

  it('refuses invalid accounts and doorbell ids', async () => {
    await expect(startSimulator({ doorbells: ['0'] })).rejects.toThrow(TypeError);
    await expect(startSimulator({ accounts: [{ email: 'a@example.com', code: '12345' }] })).rejects.toThrow('code must be 6 digits');
  });

  it('rejects when a port is taken and closes the servers it already started', async () => {
    const holder = await startSimulator();
    const baseline = networkHandles();
    const takenPort = Number(new URL(holder.doorbellUrl).port);

    await expect(startSimulator({ ports: { doorbell: takenPort } })).rejects.toThrow(/EADDRINUSE/);

    expect(await settledNetworkHandles(baseline)).toBeLessThanOrEqual(baseline);
    await holder.close();
  });
});

describe('simulator: routing and recording', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT] });

  it('answers 404 to an unknown path on every server and records it without a route', async () => {
    for (const base of [simulator().accountUrl, simulator().regionUrl, simulator().doorbellUrl]) {
      expect((await send(`${base}/api/v2/whatever`, { method: 'GET' })).status).toBe(404);
    }

    expect(simulator().invalidRequests().map((request) => [request.service, request.route, request.status])).toEqual([
      ['account', undefined, 404],
      ['region', undefined, 404],
      ['doorbell', undefined, 404],
    ]);
  });

  it('answers 405 with Allow to a known path with another method', async () => {
    const response = await send(`${simulator().doorbellUrl}/clients_api/device`, { method: 'PUT', body: registrationBody('http://127.0.0.1:9/p') });

    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('PATCH');
    expect(simulator().invalidRequests()).toEqual([expect.objectContaining({ route: 'register', status: 405 })]);
  });

  it('refuses a doorbell route sent to the account server', async () => {
    const response = await send(`${simulator().accountUrl}/clients_api/device`, { method: 'PATCH' });

    expect(response.status).toBe(404);
    expect(json(response).msg).toContain('belongs on the doorbell server');
  });

  it('refuses a body larger than 64 KiB with 413', async () => {
    const response = await send(`${simulator().doorbellUrl}/clients_api/device`, { method: 'PATCH', body: 'x'.repeat(70_000) });

    expect(response.status).toBe(413);
    expect(simulator().invalidRequests()).toHaveLength(1);
  });

  it('records method, path, raw query, lower-cased headers and body in arrival order', async () => {
    await send(regionUrl(simulator()), { headers: { 'X-Trace': 'one' } });
    await send(`${simulator().doorbellUrl}/clients_api/doorbots/1/motions_subscribe`, { body: '' });

    const [region, subscription] = simulator().requests;
    expect(region).toMatchObject({ service: 'account', route: 'region', method: 'POST', rawQuery: expect.stringContaining('needtwostepauth=false') });
    expect(region.headers['x-trace']).toBe('one');
    expect(subscription).toMatchObject({ service: 'doorbell', route: 'subscribe', path: '/clients_api/doorbots/1/motions_subscribe', rawQuery: '', body: '' });
  });

  it('forgets recorded requests on reset() but keeps tokens and accounts', async () => {
    const token = await signIn(simulator());

    simulator().reset();

    expect(simulator().requests).toEqual([]);
    expect(simulator().issuedTokens).toEqual([token]);
    expect(json(await send(regionUrl(simulator())))).toMatchObject({ code: 200 });
  });

  it('adds accounts at run time, and a replaced account gets a fresh code', async () => {
    await signIn(simulator());
    simulator().addAccount(ACCOUNT);

    expect(await signIn(simulator())).toEqual(expect.any(String));
    expect(simulator().issuedTokens).toHaveLength(2);
  });
});

describe('simulator: injected faults', () => {
  const simulator = useSimulator({ accounts: [ACCOUNT] });

  it('answers an HTTP status with Retry-After for `times` requests, then normally', async () => {
    simulator().injectFault('region', { status: 503, retryAfter: '7', times: 2 });

    const statuses = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await send(regionUrl(simulator()));
      statuses.push([response.status, response.headers['retry-after']]);
    }

    expect(statuses).toEqual([
      [503, '7'],
      [503, '7'],
      [200, undefined],
    ]);
    expect(simulator().requestsTo('region').map((request) => request.status)).toEqual([503, 503, 200]);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it('answers a service error envelope with HTTP 200 and leaves the code unspent', async () => {
    simulator().injectFault('login', { serviceCode: 9002, msg: 'too many attempts' });

    const faulted = await login(simulator());

    expect(faulted.status).toBe(200);
    expect(json(faulted)).toEqual({ code: 9002, msg: 'too many attempts', data: null });
    expect(simulator().issuedTokens).toEqual([]);
    expect(json(await login(simulator()))).toMatchObject({ code: 200 });
  });

  it('still judges a faulted request and records its problems', async () => {
    simulator().injectFault('login', { status: 500 });

    const response = await login(simulator(), { body: loginForm({ country: 'de' }) });

    expect(response.status).toBe(500);
    expect(simulator().invalidRequests()).toEqual([expect.objectContaining({ status: 500, problems: ['country must be 2 uppercase letters'] })]);
  });

  it('resets the connection without answering', async () => {
    const token = await signIn(simulator());
    simulator().injectFault('register', { reset: true });

    await expect(register(simulator(), token)).rejects.toThrow();

    expect(simulator().requestsTo('register')).toEqual([expect.objectContaining({ status: 0, problems: [] })]);
    expect(simulator().pushToken).toBeUndefined();
  });

  it('delays the normal answer by delayMs', async () => {
    const token = await signIn(simulator());
    await register(simulator(), token);
    simulator().injectFault('subscribe', { delayMs: 300 });

    const started = performance.now();
    const response = await subscribe(simulator(), token, '42');

    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(response.status).toBe(200);
    expect(simulator().subscribedDoorbells.has('42')).toBe(true);
  });

  it('answers a raw malformed body with its content type', async () => {
    simulator().injectFault('region', { rawBody: '<html>bad gateway</html>', contentType: 'text/html' });

    const response = await send(regionUrl(simulator()));

    expect(response).toMatchObject({ status: 200, text: '<html>bad gateway</html>' });
    expect(response.headers['content-type']).toBe('text/html');
  });

  it('applies faults in the order injected and forgets them on clearFaults()', async () => {
    simulator().injectFault('region', { status: 429 });
    simulator().injectFault('region', { status: 502 });
    expect((await send(regionUrl(simulator()))).status).toBe(429);

    simulator().clearFaults();

    expect((await send(regionUrl(simulator()))).status).toBe(200);
  });

  it('applies a fault with a deviceId to that doorbell\'s subscriptions alone', async () => {
    const token = await signIn(simulator());
    await register(simulator(), token);
    simulator().injectFault('subscribe', { status: 503, deviceId: '42', times: 2 });

    const statuses = [];
    for (const deviceId of ['7', '42', '7', '42', '42']) {
      statuses.push((await subscribe(simulator(), token, deviceId)).status);
    }

    expect(statuses).toEqual([200, 503, 200, 503, 200]);
  });

  it('does not spend a fault on a request its route does not serve', async () => {
    simulator().injectFault('login', { status: 503 });

    expect((await send(`${simulator().accountUrl}/api/v4/auth/email/login/code`)).status).toBe(404);
    expect((await login(simulator())).status).toBe(503);
  });

  it.each<[RouteName, Fault, string]>([
    ['subscribe', { serviceCode: 2010 }, 'serviceCode applies to the account routes only'],
    ['region', { status: 503, reset: true }, 'more than one outcome'],
    ['region', {}, 'needs status, serviceCode, reset, rawBody or delayMs'],
    ['region', { retryAfter: '1', delayMs: 5 }, 'retryAfter needs status'],
    ['login', { status: 99 }, 'status must be 200-599'],
    ['login', { status: 500, times: 0 }, 'times must be an integer >= 1'],
    ['register', { status: 500, deviceId: '7' }, 'deviceId applies to the subscribe route only'],
  ])('refuses a %s fault that cannot work: %j', (route, fault, message) => {
    expect(() => simulator().injectFault(route, fault)).toThrow(message);
  });
});

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
