import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HomebridgeProcess } from '../../scripts/lib/homebridge-process.js';
import { withTimeout } from '../../scripts/lib/timeout.js';
import { startSimulator } from '../../simulator/index.js';
import type { Simulator } from '../../simulator/index.js';
import { useSimulator } from '../support/each-test.js';
import { ACCOUNT, json, listDevices, login, loginForm, register, registrationBody, send, signIn, signInAs, startReceiver, subscribe } from './requests.js';
import type { Receiver } from './requests.js';

/** ACCOUNT (the default, first account) and two more, each with doorbells of its own; 5550000 is in all three. */
const SHARED = '5550000';
const FIRST = { ...ACCOUNT, doorbells: ['1234567', SHARED] };
const SECOND = { email: 'second@example.com', code: '000222', doorbells: ['2000001', '2000002', SHARED] };
const THIRD = { email: 'Third@Example.com', code: '333333', doorbells: ['3000001', SHARED] };

/** The ids the account's device list holds, in order. */
async function listedIds(simulator: Simulator, token: string): Promise<number[]> {
  const body = json(await listDevices(simulator, token));
  return ['doorbots', 'authorized_doorbots', 'stickup_cams'].flatMap((list) => (body[list] as Array<{ id: number }>).map(({ id }) => id));
}

function control(simulator: Simulator, path: string, method = 'GET', body?: string): ReturnType<typeof send> {
  return send(`${simulator.doorbellUrl}/__simulator/${path}`, { method, body });
}

describe('simulator: several accounts', () => {
  const simulator = useSimulator({ accounts: [FIRST, SECOND] });

  it('signs each of two accounts in with its own code only, giving each its own token', async () => {
    const refused = await login(simulator(), { body: loginForm({ email: SECOND.email, code: ACCOUNT.code }) });
    expect(json(refused)).toMatchObject({ code: 2018 });

    const first = await signIn(simulator());
    const second = await signInAs(simulator(), SECOND);

    expect(first).not.toBe(second);
    expect(simulator().account(ACCOUNT.email)?.tokens).toEqual([first]);
    expect(simulator().account('SECOND@example.com')?.tokens).toEqual([second]);
    expect(simulator().accounts().map(({ email }) => email)).toEqual([ACCOUNT.email, SECOND.email]);
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it("answers 404 to a token subscribing another account's doorbell, and lists only its own", async () => {
    const first = await signIn(simulator());
    const second = await signInAs(simulator(), SECOND);
    await register(simulator(), first);
    await register(simulator(), second);

    const foreign = await subscribe(simulator(), second, '1234567');
    const own = await subscribe(simulator(), second, '2000001');

    expect(foreign.status).toBe(404);
    expect(json(foreign).reason).toBe('no doorbell 1234567 on this account');
    expect(own.status).toBe(200);
    expect((await subscribe(simulator(), first, '2000001')).status).toBe(404);
    expect(await listedIds(simulator(), first)).toEqual([1234567, 5550000]);
    expect(await listedIds(simulator(), second)).toEqual([2000001, 2000002, 5550000]);
    expect(simulator().account(SECOND.email)?.subscribedDoorbells).toEqual(new Set(['2000001']));
    expect(simulator().account(ACCOUNT.email)?.subscribedDoorbells).toEqual(new Set());
    expect(simulator().invalidRequests()).toEqual([]);
  });

  it("revokes one account's sessions and leaves the other's working", async () => {
    const first = await signIn(simulator());
    const second = await signInAs(simulator(), SECOND);

    simulator().revokeAccount(ACCOUNT.email);

    expect((await register(simulator(), first)).status).toBe(401);
    expect((await listDevices(simulator(), first)).status).toBe(401);
    expect((await register(simulator(), second)).status).toBe(204);
    expect((await subscribe(simulator(), second, '2000002')).status).toBe(200);
    expect(simulator().account(ACCOUNT.email)?.revokedTokens).toEqual([first]);
    expect(simulator().account(SECOND.email)?.revokedTokens).toEqual([]);
    expect(() => simulator().revokeAccount('nobody@example.com')).toThrow('no account nobody@example.com');
  });

  it("revokes one account's sessions through the control API, 404 for an unknown e-mail", async () => {
    const first = await signIn(simulator());
    const second = await signInAs(simulator(), SECOND);

    const revoked = await control(simulator(), `accounts/${encodeURIComponent(SECOND.email)}/revoke`, 'POST');

    expect(revoked.status).toBe(200);
    expect(json(revoked).accounts).toEqual([
      expect.objectContaining({ email: ACCOUNT.email, sessions: 1, revokedSessions: 0 }),
      expect.objectContaining({ email: SECOND.email, sessions: 0, revokedSessions: 1 }),
    ]);
    expect((await register(simulator(), second)).status).toBe(401);
    expect((await register(simulator(), first)).status).toBe(204);
    expect((await control(simulator(), 'accounts/nobody%40example.com/revoke', 'POST')).status).toBe(404);
    expect((await control(simulator(), 'accounts/x/revoke', 'GET')).status).toBe(405);
  });

  it('files each request under its account, and shows each registration and subscription in the control state', async () => {
    const receiver = await startReceiver();
    try {
      const first = await signIn(simulator());
      const second = await signInAs(simulator(), SECOND);
      await register(simulator(), first, registrationBody(receiver.pushToken));
      await register(simulator(), second, registrationBody(receiver.pushToken));
      await subscribe(simulator(), second, SHARED);
      simulator().revokeAccount(SECOND.email);
      await subscribe(simulator(), second, '2000001');

      expect(simulator().requestsOf(SECOND.email).map(({ route, status }) => [route, status])).toEqual([
        ['login', 200],
        ['register', 204],
        ['subscribe', 200],
        ['subscribe', 401],
      ]);
      expect(simulator().requestsOf(ACCOUNT.email).map(({ route }) => route)).toEqual(['login', 'register']);

      const state = await control(simulator(), 'accounts');
      expect(state.status).toBe(200);
      expect(state.text).not.toContain('receiver-secret');
      expect(state.text).not.toContain(first);
      expect(json(state).accounts).toEqual([
        {
          email: ACCOUNT.email,
          doorbells: FIRST.doorbells,
          sessions: 1,
          revokedSessions: 0,
          pushToken: `${new URL(receiver.pushToken).origin}/***`,
          subscribedDoorbells: [],
          requestCounts: { region: 0, login: 1, register: 1, subscribe: 0, devices: 0, unrouted: 0 },
        },
        {
          email: SECOND.email,
          doorbells: SECOND.doorbells,
          sessions: 0,
          revokedSessions: 1,
          pushToken: `${new URL(receiver.pushToken).origin}/***`,
          subscribedDoorbells: [SHARED],
          requestCounts: { region: 0, login: 1, register: 1, subscribe: 2, devices: 0, unrouted: 0 },
        },
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('adds an account through the control API, with a code of its own when none is given', async () => {
    const added = await control(simulator(), 'accounts', 'POST', JSON.stringify({ email: 'new@example.com', doorbells: ['4000001'] }));

    expect(added.status).toBe(200);
    const { code } = json(added) as { code: string };
    expect(json(added)).toEqual({ email: 'new@example.com', code: expect.stringMatching(/^[0-9]{6}$/), doorbells: ['4000001'] });
    const token = await signInAs(simulator(), { email: 'new@example.com', code });
    await register(simulator(), token);
    expect((await subscribe(simulator(), token, '4000001')).status).toBe(200);
    expect((await subscribe(simulator(), token, '1234567')).status).toBe(404);

    expect((await control(simulator(), 'accounts', 'POST', '{"email":"x@example.com","doorbells":[1]}')).status).toBe(400);
    expect((await control(simulator(), 'accounts', 'POST', '{"email":"x@example.com","code":"12"}')).status).toBe(400);
    expect((await control(simulator(), 'accounts', 'DELETE')).status).toBe(405);
  });
});

describe('simulator: three accounts and a shared doorbell', () => {
  const simulator = useSimulator({ accounts: [FIRST, SECOND, THIRD] });
  const receivers: Receiver[] = [];
  let tokens: string[];

  beforeEach(async () => {
    receivers.push(await startReceiver(), await startReceiver(200, 'second'));
    tokens = [await signIn(simulator()), await signInAs(simulator(), SECOND), await signInAs(simulator(), { ...THIRD, email: 'third@example.com' })];
  });

  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  it('signs three accounts in, each reading only its own device list', async () => {
    expect(new Set(tokens).size).toBe(3);
    expect(await listedIds(simulator(), tokens[2])).toEqual([3000001, 5550000]);
    expect(simulator().account('third@example.com')?.tokens).toEqual([tokens[2]]);
  });

  it('delivers a motion on a doorbell subscribed by two accounts once per subscription, each to its push target', async () => {
    await register(simulator(), tokens[0], registrationBody(receivers[0].pushToken));
    await register(simulator(), tokens[1], registrationBody(receivers[1].pushToken));
    await register(simulator(), tokens[2], registrationBody(receivers[1].pushToken));
    for (const token of tokens.slice(0, 2)) {
      expect((await subscribe(simulator(), token, SHARED)).status).toBe(200);
      expect((await subscribe(simulator(), token, SHARED)).status).toBe(200);
    }

    const deliveries = await simulator().deliverMotionEach(SHARED, { id: 'evt-shared' });

    expect(deliveries).toEqual([
      { account: ACCOUNT.email, status: 202, body: '{"accepted":true}' },
      { account: SECOND.email, status: 200, body: 'second' },
    ]);
    expect(receivers.map(({ deliveries: received }) => received.length)).toEqual([1, 1]);
    // One event at the doorbell: every account is told the same.
    expect(receivers[0].deliveries[0].body).toBe(receivers[1].deliveries[0].body);
    expect(receivers[0].deliveries[0].body).toMatch(/^\{"device_id":5550000,"kind":"motion","id":"evt-shared",/);
  });

  it("delivers a doorbell subscribed by one account only to that account's push target", async () => {
    await register(simulator(), tokens[0], registrationBody(receivers[0].pushToken));
    await register(simulator(), tokens[1], registrationBody(receivers[1].pushToken));
    await subscribe(simulator(), tokens[0], '1234567');

    expect(await simulator().deliverMotion('1234567')).toEqual({ status: 202, body: '{"accepted":true}' });

    expect(receivers.map(({ deliveries }) => deliveries.length)).toEqual([1, 0]);
  });

  it('delivers twice to a push target two accounts registered, and answers each delivery through the control API', async () => {
    await register(simulator(), tokens[1], registrationBody(receivers[0].pushToken));
    await register(simulator(), tokens[2], registrationBody(receivers[0].pushToken));
    await subscribe(simulator(), tokens[1], SHARED);
    await subscribe(simulator(), tokens[2], SHARED);

    const response = await control(simulator(), `motion/${SHARED}`, 'POST', '{"id":"evt-9"}');

    expect(json(response)).toEqual({
      status: 202,
      body: '{"accepted":true}',
      deliveries: [
        { account: SECOND.email, status: 202, body: '{"accepted":true}' },
        { account: THIRD.email, status: 202, body: '{"accepted":true}' },
      ],
    });
    expect(receivers[0].deliveries.map(({ body }) => JSON.parse(body) as { id: string }).map(({ id }) => id)).toEqual(['evt-9', 'evt-9']);
  });

  it("changes a shared doorbell's health in every account's list", async () => {
    simulator().setDoorbellHealth(SHARED, { connection: 'offline' });

    for (const token of tokens) {
      expect((await listDevices(simulator(), token)).text).toContain(`"id":${SHARED},"description":"Doorbell ${SHARED}","kind":"lpd_v2","device_id":"dev-${SHARED}","alerts":{"connection":"offline"`);
    }
  });
});

describe('simulator: accounts without doorbells of their own', () => {
  it("share the simulator's doorbells, and a replaced account keeps its sessions and subscriptions", async () => {
    const simulator = await startSimulator({ accounts: [ACCOUNT, { email: 'other@example.com', code: '111111' }], doorbells: ['1234567'] });
    try {
      const other = await signInAs(simulator, { email: 'other@example.com', code: '111111' });
      await register(simulator, other);
      expect((await subscribe(simulator, other, '1234567')).status).toBe(200);
      expect((await subscribe(simulator, other, '7654321')).status).toBe(404);

      const replaced = simulator.addAccount({ email: 'other@example.com', code: '222222' });

      expect(replaced).toMatchObject({ email: 'other@example.com', code: '222222', doorbells: ['1234567'], tokens: [other] });
      expect(replaced.subscribedDoorbells).toEqual(new Set(['1234567']));
      expect((await register(simulator, other)).status).toBe(204);
      expect(simulator.accounts()[0].email).toBe(ACCOUNT.email);
    } finally {
      await simulator.close();
    }
  });
});

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
const OUTPUT_TIMEOUT_MS = 15_000;
const EXIT_TIMEOUT_MS = 10_000;

describe('simulator: command line with several accounts', () => {
  it('starts --accounts 2 with a shared doorbell, printing each account, and each signs in with its printed code', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts', '--accounts', '2', '--shared-doorbell', '1234567'], {
      cwd: repositoryRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const cli = new HomebridgeProcess(child, 'The simulator');
    try {
      const [, doorbellUrl] = await cli.waitForLine(/^doorbell\s+(http:\/\/127\.0\.0\.1:\d+)$/m, OUTPUT_TIMEOUT_MS);
      const [, regionUrl] = await cli.waitForLine(/^region\s+(http:\/\/127\.0\.0\.1:\d+)$/m, OUTPUT_TIMEOUT_MS);
      await cli.waitForLine(/^ {2}demo@example\.com {2}code 123456 {2}doorbells any id$/m, OUTPUT_TIMEOUT_MS);
      const [, code, doorbells] = await cli.waitForLine(/^ {2}user2@example\.com {2}code (\d{6}) {2}doorbells (.+)$/m, OUTPUT_TIMEOUT_MS);
      expect(doorbells.split(', ')).toEqual(['2000001', '2000002', '1234567']);

      const target = { regionUrl, doorbellUrl } as Simulator;
      const second = await signInAs(target, { email: 'user2@example.com', code });
      const first = await signInAs(target, { email: 'demo@example.com', code: '123456' });
      await register(target, second);
      await register(target, first);
      expect((await subscribe(target, second, '1234567')).status).toBe(200);
      expect((await subscribe(target, first, '1234567')).status).toBe(200);
      expect((await subscribe(target, second, '3000001')).status).toBe(404);

      const accounts = json(await control(target, 'accounts')).accounts as Array<{ email: string; subscribedDoorbells: string[] }>;
      expect(accounts.map(({ email, subscribedDoorbells }) => [email, subscribedDoorbells])).toEqual([
        ['demo@example.com', ['1234567']],
        ['user2@example.com', ['1234567']],
      ]);
    } finally {
      await cli.stop(EXIT_TIMEOUT_MS);
    }
    expect(cli.exitCode).toBe(0);
  });

  it.each([
    ['zero accounts', ['--accounts', '0'], '--accounts must be a whole number from 1 to 100'],
    ['fewer accounts than --account gives', ['--account', 'a@example.com:111111', '--account', 'b@example.com:222222', '--accounts', '1'], '--accounts 1 is fewer than the 2 accounts'],
    ['a shared doorbell without --accounts', ['--shared-doorbell', '1234567'], '--shared-doorbell goes with --accounts'],
    ['a shared doorbell that is no id', ['--accounts', '2', '--shared-doorbell', '01'], '--shared-doorbell must be a doorbell id'],
  ])('exits with 2, the mistake and the usage on %s', async (_name, args, mistake) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts', ...args], { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const cli = new HomebridgeProcess(child, 'The simulator');
    try {
      await withTimeout(cli.closed, EXIT_TIMEOUT_MS, 'the simulator exit');
    } finally {
      await cli.stop(EXIT_TIMEOUT_MS);
    }
    expect(cli.exitCode).toBe(2);
    expect(cli.lines.join('\n')).toContain(mistake);
    expect(cli.lines.join('\n')).toContain('usage: simulator');
  });
});
