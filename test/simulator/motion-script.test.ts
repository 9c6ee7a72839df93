import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HomebridgeProcess } from '../../scripts/lib/homebridge-process.js';
import { withTimeout } from '../../scripts/lib/timeout.js';
import { useSimulator } from '../support/each-test.js';
import { ACCOUNT, register, registrationBody, signIn, signInAs, startReceiver, subscribe } from './requests.js';
import type { Receiver } from './requests.js';

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
/** tsx compiles the script first: generous for a busy machine; the script itself answers at once. */
const EXIT_TIMEOUT_MS = 20_000;

const SHARED = '5550000';
const SECOND = { email: 'second@example.com', code: '000222', doorbells: ['2000001', SHARED] };

/** `npm run motion -- <args>` the way npm runs it (tsx): its exit code and everything it printed. */
async function runMotion(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/motion.ts', ...args], { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  const motion = new HomebridgeProcess(child, 'npm run motion');
  try {
    await withTimeout(motion.closed, EXIT_TIMEOUT_MS, 'npm run motion');
  } finally {
    await motion.stop(EXIT_TIMEOUT_MS);
  }
  return { code: motion.exitCode, output: motion.lines.join('\n') };
}

describe('npm run motion against a simulator of several accounts', () => {
  const simulator = useSimulator({ accounts: [{ ...ACCOUNT, doorbells: ['1234567', SHARED] }, SECOND] });
  const receivers: Receiver[] = [];

  beforeEach(async () => {
    receivers.push(await startReceiver(200), await startReceiver(202));
    const first = await signIn(simulator());
    const second = await signInAs(simulator(), SECOND);
    await register(simulator(), first, registrationBody(receivers[0].pushToken));
    await register(simulator(), second, registrationBody(receivers[1].pushToken));
    for (const [token, id] of [[first, SHARED], [second, SHARED], [second, '2000001']]) {
      expect((await subscribe(simulator(), token, id)).status).toBe(200);
    }
  });

  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  it('delivers a shared doorbell to every subscription of it, and says what each answered', async () => {
    const run = await runMotion([SHARED, '--simulator', simulator().doorbellUrl]);

    expect(run.code).toBe(0);
    expect(run.output).toContain(
      [
        `Delivered motion for ${SHARED} (Doorbell ${SHARED}) to 2 subscriptions:`,
        `  ${ACCOUNT.email}: the push address answered 200`,
        `  ${SECOND.email}: the push address answered 202`,
      ].join('\n'),
    );
    expect(receivers.map(({ deliveries }) => deliveries.length)).toEqual([1, 1]);
  });

  it("finds a doorbell of the second account, and delivers it to that account's push address only", async () => {
    const run = await runMotion(['2000001', '--kind', 'ding', '--simulator', `${simulator().doorbellUrl}/`]);

    expect(run).toEqual({ code: 0, output: expect.stringMatching(/^Delivered ding for 2000001 \(Doorbell 2000001\): the push address answered 202$/m) });
    expect(receivers.map(({ deliveries }) => deliveries.length)).toEqual([0, 1]);
  });

  it('names the doorbells of every account for an id none of them has', async () => {
    const run = await runMotion(['42', '--simulator', simulator().doorbellUrl]);

    expect(run.code).toBe(1);
    expect(run.output).toContain(`42 is not a doorbell of any of the simulator's accounts: 1234567 (${ACCOUNT.email}), ${SHARED} (${ACCOUNT.email}), 2000001 (${SECOND.email}), ${SHARED} (${SECOND.email}).`);
    expect(receivers.map(({ deliveries }) => deliveries.length)).toEqual([0, 0]);
  });
});
