/**
 * The demo as a newcomer uses it: `npm start` (here on loopback, in a temporary folder instead of
 * `.demo/`), `npm run motion -- 1234567` (and `--kind ding`, `--detection person`) from a second
 * process, Ctrl-C, and `npm start` again; then `npm start -- --accounts 2`, a motion at a doorbell of
 * each account.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HomebridgeProcess } from '../../scripts/lib/homebridge-process.js';
import { withTimeout } from '../../scripts/lib/timeout.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { REPO_ROOT } from '../../scripts/lib/paths.js';

const DEMO_SCRIPT = join(REPO_ROOT, 'scripts', 'demo.ts');
const MOTION_SCRIPT = join(REPO_ROOT, 'scripts', 'motion.ts');

/** Homebridge publishes and the plugin subscribes within a few seconds. */
const READY_TIMEOUT_MS = 20_000;
/** Mostly tsx starting up. */
const MOTION_TIMEOUT_MS = 10_000;
/** The plugin logs a delivered motion within milliseconds. */
const LOG_TIMEOUT_MS = 5_000;
/** Homebridge here takes its own 5 s forced-exit delay after SIGTERM. */
const EXIT_TIMEOUT_MS = 15_000;

/**
 * Both scripts run as `node --import tsx <script>`, which is what `tsx <script>` does, minus tsx's
 * wrapper process: the pid signalled is the demo itself.
 */
function scriptArgs(script: string, args: string[]): string[] {
  return ['--import', 'tsx', script, ...args];
}

interface MotionOutcome {
  code: number | null;
  output: string;
}

/** `npm run motion -- <args>`: resolves with its exit code and output, whatever the code. */
function runMotion(args: string[]): Promise<MotionOutcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, scriptArgs(MOTION_SCRIPT, args), { cwd: REPO_ROOT, timeout: MOTION_TIMEOUT_MS }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code as number | null), output: stdout + stderr });
    });
  });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** One `npm start`: the demo as a child process, its output lines (both streams) and its exit. */
class DemoRun extends HomebridgeProcess {
  /** Starts the demo in `dir` and resolves with it and its Homebridge's pid once that is started. */
  static async start(dir: string, more: string[] = []): Promise<{ demo: DemoRun; homebridgePid: number }> {
    const child = spawn(process.execPath, scriptArgs(DEMO_SCRIPT, ['--loopback', '--dir', dir, ...more]), {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const demo = new DemoRun(child, 'The demo');
    const [, pid] = await demo.waitForLine(/^Starting Homebridge \(pid (\d+)\)/, READY_TIMEOUT_MS);
    return { demo, homebridgePid: Number(pid) };
  }

  /** Ctrl-C; resolves with the exit code. */
  async interrupt(): Promise<number | null> {
    process.kill(this.pid, 'SIGINT');
    await withTimeout(this.closed, EXIT_TIMEOUT_MS, "the demo's exit");
    return this.exitCode;
  }
}

const PAIRING_CODE_LINE = /^ {2}HomeKit pairing code {2}(\d{3}-\d{2}-\d{3})$/;

describeWithBuiltPlugin('the demo (npm start --loopback) with npm run motion', () => {
  let dir: string;
  /** Processes not yet seen to stop; a failed test leaves them to afterAll. */
  let unstopped: number[] = [];
  let demo: DemoRun;
  let homebridgePid: number;
  let firstPairingCode: string;

  async function startDemo(more: string[] = []): Promise<void> {
    ({ demo, homebridgePid } = await DemoRun.start(dir, more));
    unstopped.push(demo.pid, homebridgePid);
  }

  async function expectCleanStop(): Promise<void> {
    expect(await demo.interrupt()).toBe(0);
    expect(isRunning(homebridgePid)).toBe(false);
    expect(existsSync(join(dir, 'demo.json'))).toBe(false);
    unstopped = [];
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'doorbell-demo-'));
    await startDemo();
  }, READY_TIMEOUT_MS);

  afterAll(async () => {
    for (const pid of unstopped.filter(isRunning)) {
      process.kill(pid, 'SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'prints the pairing code and how to trigger motion once Homebridge runs',
    async () => {
      [, firstPairingCode] = await demo.waitForLine(PAIRING_CODE_LINE, READY_TIMEOUT_MS);
      expect(demo.lines).toContain(`      npm run motion -- 1234567 --dir ${dir}`);
    },
    READY_TIMEOUT_MS,
  );

  it(
    'runs in relay mode, the default, and delivers motion and a ring through the relay: Homebridge logs "Motion at Front Door", then "Doorbell rang at Front Door"',
    async () => {
      expect(demo.lines).toContainEqual(expect.stringMatching(/^\[homebridge\] \[Doorbell Motion\] push relay connected: http:\/\/127\.0\.0\.1:\d+$/));
      const motion = await runMotion(['1234567', '--dir', dir]);

      expect(motion).toEqual({ code: 0, output: expect.stringMatching(/^Delivered motion for 1234567 \(Front Door\): the push address answered 200/) });
      await demo.waitForLine(/^\[homebridge\] \[Doorbell Motion\] Motion at Front Door$/, LOG_TIMEOUT_MS);

      const ring = await runMotion(['1234567', '--kind', 'ding', '--dir', dir]);
      expect(ring).toEqual({ code: 0, output: expect.stringMatching(/^Delivered ding for 1234567 \(Front Door\): the push address answered 200/) });
      await demo.waitForLine(/^\[homebridge\] \[Doorbell Motion\] Doorbell rang at Front Door$/, LOG_TIMEOUT_MS);
    },
    2 * (MOTION_TIMEOUT_MS + LOG_TIMEOUT_MS),
  );

  it(
    'delivers a person seen at the front door with --detection person, and a package with --detection package: Homebridge logs "Motion at Front Door (person)", then "(package)"',
    async () => {
      const person = await runMotion(['1234567', '--detection', 'person', '--dir', dir]);

      expect(person).toEqual({ code: 0, output: expect.stringMatching(/^Delivered motion \(person\) for 1234567 \(Front Door\): the push address answered 200/) });
      await demo.waitForLine(/^\[homebridge\] \[Doorbell Motion\] Motion at Front Door \(person\)$/, LOG_TIMEOUT_MS);
      // Sent as the service's `package_delivery`, which the plugin reads as a package.
      const parcel = await runMotion(['1234567', '--detection', 'package', '--dir', dir]);
      expect(parcel).toEqual({ code: 0, output: expect.stringMatching(/^Delivered motion \(package\) for 1234567 \(Front Door\): the push address answered 200/) });
      await demo.waitForLine(/^\[homebridge\] \[Doorbell Motion\] Motion at Front Door \(package\)$/, LOG_TIMEOUT_MS);
      expect(await runMotion(['1234567', '--kind', 'ding', '--detection', 'person', '--dir', dir])).toEqual({
        code: 2,
        output: expect.stringContaining('--detection goes with a motion and must be one of person, vehicle, package, animal, other.'),
      });
    },
    3 * MOTION_TIMEOUT_MS + 2 * LOG_TIMEOUT_MS,
  );

  it(
    'refuses an id that is not a demo doorbell',
    async () => {
      expect(await runMotion(['42', '--dir', dir])).toEqual({ code: 1, output: expect.stringContaining("42 is not one of the demo's doorbells") });
    },
    MOTION_TIMEOUT_MS,
  );

  it('stops on SIGINT with exit code 0, leaving no Homebridge and no demo.json behind', expectCleanStop, EXIT_TIMEOUT_MS + 1_000);

  it(
    'then tells npm run motion that the demo is not running',
    async () => {
      expect(await runMotion(['1234567', '--dir', dir])).toEqual({ code: 1, output: expect.stringContaining('The demo is not running') });
    },
    MOTION_TIMEOUT_MS,
  );

  it(
    'runs again in the same folder: same bridge and pairing code, signed in to the fresh simulator with a new code',
    async () => {
      await startDemo();
      const [, pairingCode] = await demo.waitForLine(PAIRING_CODE_LINE, READY_TIMEOUT_MS);

      expect(pairingCode).toBe(firstPairingCode);
      expect(demo.lines).toContain('[homebridge] [Doorbell Motion] Signed in as demo (demo@example.com)');
      expect(demo.lines).toContain('[homebridge] [Doorbell Motion] 2 of 2 doorbells subscribed to motion alerts');
      await expectCleanStop();
    },
    READY_TIMEOUT_MS + EXIT_TIMEOUT_MS,
  );

  it(
    'runs with --accounts 2 in the same folder: both accounts signed in, each with its doorbells subscribed, and npm run motion reaching a doorbell of either',
    async () => {
      await startDemo(['--accounts', '2']);
      const [, pairingCode] = await demo.waitForLine(PAIRING_CODE_LINE, READY_TIMEOUT_MS);

      expect(pairingCode).toBe(firstPairingCode);
      expect(demo.lines).toContain('[homebridge] [Doorbell Motion] [Account 1] Signed in as demo (demo@example.com)');
      expect(demo.lines).toContain('[homebridge] [Doorbell Motion] [Account 2] Signed in as user2 (user2@example.com)');
      expect(demo.lines).toContain('[homebridge] [Doorbell Motion] [Account 1] 2 of 2 doorbells subscribed to motion alerts');
      expect(demo.lines).toContain('[homebridge] [Doorbell Motion] [Account 2] 1 of 1 doorbells subscribed to motion alerts');
      expect(demo.lines).toContain(`  Account 2's User 2 Door: npm run motion -- 2000001 --dir ${dir}`);

      expect(await runMotion(['2000001', '--dir', dir])).toEqual({ code: 0, output: expect.stringMatching(/^Delivered motion for 2000001 \(User 2 Door\): the push address answered 200/) });
      await demo.waitForLine(/^\[homebridge\] \[Doorbell Motion\] Motion at User 2 Door$/, LOG_TIMEOUT_MS);
      expect(await runMotion(['7654321', '--dir', dir])).toEqual({ code: 0, output: expect.stringMatching(/^Delivered motion for 7654321 \(Back Door\): the push address answered 200/) });
      await demo.waitForLine(/^\[homebridge\] \[Doorbell Motion\] Motion at Back Door$/, LOG_TIMEOUT_MS);
      await expectCleanStop();
    },
    READY_TIMEOUT_MS + 2 * (MOTION_TIMEOUT_MS + LOG_TIMEOUT_MS) + EXIT_TIMEOUT_MS,
  );
});
