/**
 * Runs a real Homebridge as a child process: for the end-to-end tests and for the demo script.
 * Homebridge's own flags and config keys are the interface; nothing here reaches into its internals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import { stripVTControlCharacters } from 'node:util';
import { withTimeout } from './timeout.js';

// One import for whoever runs Homebridge: what to run it with, what to tell it, and the process.
export { currentNodeRunsHomebridge2, REQUIRED_NODE_MAJOR, resolveNode22Binary } from './node-binary.js';
export {
  freeLoopbackPort,
  newBridgeIdentity,
  writeHomebridgeConfig,
  type BridgeIdentity,
  type BridgeSettings,
  type HomebridgeConfig,
} from './homebridge-config.js';

/** How long a process that ignored SIGTERM gets to die after SIGKILL before we call it stuck. */
const SIGKILL_GRACE_MS = 5_000;

/** Lines quoted in an error, so a failed wait shows what Homebridge was doing. */
const LINES_IN_ERRORS = 30;

/**
 * Homebridge cannot be told to listen on loopback only (see that file), so this preload makes it.
 * A URL, because `--import` takes a module specifier and not a path.
 */
export const LOOPBACK_GUARD_URL = new URL('./loopback-guard.mjs', import.meta.url).href;

/** See that file: Homebridge's and its plugins' debug lines without matter.js's. */
const DEBUG_WITHOUT_MATTER_URL = new URL('./debug-without-matter.mjs', import.meta.url).href;

export interface HomebridgeLaunch {
  /** `bin/homebridge` (1.x) or `bin/homebridge.js` (2.x) of the Homebridge to run. */
  homebridgeBin: string;
  nodeBinary: string;
  /** `-U`: holds config.json, and everything Homebridge and its plugins may write. */
  storagePath: string;
  /** `-P`: a plugin's own folder, or a folder of plugins. */
  pluginPath: string;
  /** Added to the environment this process runs with. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * On unless turned off: `-D`, Homebridge's debug output. With Matter on, `-D` also logs every Matter
   * message, which slows Homebridge down several times over: `'without-matter'` turns on the debug
   * lines of Homebridge and the plugins alone.
   */
  debug?: boolean | 'without-matter';
  /**
   * On unless turned off: preloads the loopback guard. Off only where Homebridge is meant to be
   * reachable from the network, as the demo is for pairing a phone.
   */
  loopbackOnly?: boolean;
}

export interface StopResult {
  /** From sending SIGTERM to the exit; 0 when the process had exited before `stop`. */
  exitedAfterMs: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when it outlived the timeout and was killed with SIGKILL. */
  killed: boolean;
}

interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

/** What runs Homebridge: the program, its arguments, and where. */
export interface HomebridgeCommand {
  command: string;
  args: string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
}

export function homebridgeCommand(launch: HomebridgeLaunch): HomebridgeCommand {
  const preload = [
    ...(launch.loopbackOnly === false ? [] : ['--import', LOOPBACK_GUARD_URL]),
    ...(launch.debug === 'without-matter' ? ['--import', DEBUG_WITHOUT_MATTER_URL] : []),
  ];
  return {
    command: launch.nodeBinary,
    args: [...preload, launch.homebridgeBin, ...homebridgeFlags(launch)],
    cwd: launch.cwd,
    env: { ...process.env, ...launch.env },
  };
}

export function startHomebridge(launch: HomebridgeLaunch): HomebridgeProcess {
  const { command, args, cwd, env } = homebridgeCommand(launch);
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const homebridge = new HomebridgeProcess(child);
  if (child.pid === undefined) {
    throw new Error(`Could not start ${launch.nodeBinary} ${launch.homebridgeBin}`);
  }
  return homebridge;
}

function homebridgeFlags({ storagePath, pluginPath, debug = true }: HomebridgeLaunch): string[] {
  return [
    '-I', // insecure mode: how hb-service (homebridge-config-ui-x) runs Homebridge by default
    '-Q', // no QR code: noise in the captured lines
    '-T', // no timestamps: lines match exact patterns
    // debug output: scenarios read the plugin's debug lines ('without-matter': see its preload)
    ...(debug === true ? ['-D'] : []),
    '-U',
    storagePath,
    '-P',
    pluginPath,
    // Plugins installed elsewhere on the machine (global node_modules) must not leak into a run.
    '--strict-plugin-resolution',
  ];
}

export class HomebridgeProcess {
  /** Every stdout and stderr line so far, colour codes removed, in arrival order. */
  readonly lines: string[] = [];
  /** Resolves once the process has exited, however it ended, and all its output is read. */
  readonly closed: Promise<void>;
  private readonly events = new EventEmitter();
  private exitStatus: ExitStatus | undefined;
  private isClosed = false;
  private forcedStop: (() => void) | undefined;

  constructor(
    private readonly child: ChildProcess,
    /** Names the process in error messages. */
    private readonly label = 'Homebridge',
  ) {
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) {
        createInterface({ input: stream }).on('line', (line) => this.record(stripVTControlCharacters(line)));
      }
    }
    child.on('error', (error) => this.record(`[harness] ${error.message}`));
    child.once('exit', (code, signal) => {
      this.exitStatus = { code, signal, at: performance.now() };
    });
    // 'close' comes after 'exit' once stdout and stderr are drained: only then are all lines in.
    this.closed = new Promise((resolve) => {
      child.once('close', () => {
        this.isClosed = true;
        this.events.emit('close');
        resolve();
      });
    });
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get running(): boolean {
    return this.exitStatus === undefined;
  }

  /** The exit code; null while running and after death by a signal. */
  get exitCode(): number | null {
    return this.exitStatus?.code ?? null;
  }

  /**
   * Called just before `stop` kills the process with SIGKILL: for a process that runs Homebridge as
   * its own child, which a SIGKILL would leave behind.
   */
  onForcedStop(action: () => void): void {
    this.forcedStop = action;
  }

  /** Calls `listener` with every line that arrives from now on, as it is added to `lines`. */
  onLine(listener: (line: string) => void): void {
    this.events.on('line', listener);
  }

  /**
   * The first line from `fromLine` on (an index into `lines`) that matches, waiting for it when it
   * has not come yet. Rejects on timeout or exit, quoting the last lines.
   */
  waitForLine(pattern: RegExp, timeoutMs: number, fromLine = 0): Promise<RegExpMatchArray> {
    const earlier = this.lines
      .slice(fromLine)
      .map((line) => line.match(pattern))
      .find((match) => match !== null);
    if (earlier) {
      return Promise.resolve(earlier);
    }
    if (this.isClosed) {
      return Promise.reject(this.failure(`exited (${this.describeExit()}) without printing a line matching ${pattern}`));
    }
    return new Promise((resolve, reject) => {
      const settle = (finish: () => void): void => {
        clearTimeout(timer);
        this.events.off('line', onLine);
        this.events.off('close', onClose);
        finish();
      };
      const onLine = (line: string): void => {
        const match = line.match(pattern);
        if (match) {
          settle(() => resolve(match));
        }
      };
      const onClose = (): void =>
        settle(() => reject(this.failure(`exited (${this.describeExit()}) without printing a line matching ${pattern}`)));
      const timer = setTimeout(
        () => settle(() => reject(this.failure(`printed no line matching ${pattern} within ${timeoutMs} ms`))),
        timeoutMs,
      );
      this.events.on('line', onLine);
      this.events.once('close', onClose);
    });
  }

  /**
   * SIGTERM, as a service manager stops Homebridge; SIGKILL when it is still running after
   * `timeoutMs`. Resolves once the process is gone and its output is read.
   */
  async stop(timeoutMs: number): Promise<StopResult> {
    if (this.isClosed) {
      return { ...this.exitOutcome(), exitedAfterMs: 0, killed: false };
    }
    const sentAt = performance.now();
    this.child.kill('SIGTERM');
    const killed = !(await this.closesWithin(timeoutMs));
    if (killed) {
      this.forcedStop?.();
      this.child.kill('SIGKILL');
      if (!(await this.closesWithin(SIGKILL_GRACE_MS))) {
        throw this.failure(`is still running ${SIGKILL_GRACE_MS} ms after SIGKILL`);
      }
    }
    const exitedAt = this.exitStatus?.at ?? performance.now();
    return { ...this.exitOutcome(), exitedAfterMs: Math.round(exitedAt - sentAt), killed };
  }

  /** How the process ended, e.g. "code 1" or "signal SIGKILL". */
  describeExit(): string {
    const { code, signal } = this.exitOutcome();
    return signal ? `signal ${signal}` : `code ${code}`;
  }

  private record(line: string): void {
    this.lines.push(line);
    this.events.emit('line', line);
  }

  private closesWithin(timeoutMs: number): Promise<boolean> {
    return withTimeout(this.closed, timeoutMs, `${this.label} exit`).then(
      () => true,
      () => false,
    );
  }

  private exitOutcome(): Pick<StopResult, 'code' | 'signal'> {
    return { code: this.exitStatus?.code ?? null, signal: this.exitStatus?.signal ?? null };
  }

  private failure(problem: string): Error {
    const lastLines = this.lines.slice(-LINES_IN_ERRORS).join('\n');
    return new Error(`${this.label} (pid ${this.pid}) ${problem}. Its last lines:\n${lastLines}`);
  }
}
