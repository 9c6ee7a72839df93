import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { nodeVersionProblem } from '../../src/values/node-version.js';

/** Homebridge 2 refuses older Node versions, and the plugin's engines start at 22 too. */
export const REQUIRED_NODE_MAJOR = 22;

/** npx may have to download Node first; on a slow registry that takes a while, but not forever. */
const NODE_DOWNLOAD_TIMEOUT_MS = 180_000;

const execFileAsync = promisify(execFile);

let registryNode22: Promise<string> | undefined;

/** True when this process's Node runs Homebridge 2 itself, without a download. */
export function currentNodeRunsHomebridge2(): boolean {
  return Number(process.versions.node.split('.')[0]) >= REQUIRED_NODE_MAJOR;
}

/**
 * A Node binary that runs Homebridge 2: the current one when it is new enough, otherwise Node 22
 * from the npm registry through npx, asked once per process (npx keeps the download in its cache).
 */
export function resolveNode22Binary(): Promise<string> {
  if (currentNodeRunsHomebridge2()) {
    return Promise.resolve(process.execPath);
  }
  registryNode22 ??= askNpxForNode22().catch((error: unknown) => {
    registryNode22 = undefined;
    throw error;
  });
  return registryNode22;
}

async function askNpxForNode22(): Promise<string> {
  const npxArgs = ['-y', '-p', `node@${REQUIRED_NODE_MAJOR}`, '--', 'node', '-p', 'process.execPath'];
  const { stdout } = await execFileAsync('npx', npxArgs, { timeout: NODE_DOWNLOAD_TIMEOUT_MS });
  return stdout.trim();
}

/** Where a system's own Node.js is usually installed, besides what PATH lists. */
const USUAL_NODE_PATHS = ['/usr/bin/node', '/usr/local/bin/node', '/bin/node'];

/**
 * A Node.js on this machine that the plugin refuses (older than MINIMUM_NODE), such as the system's
 * Node 20, found on PATH or where one is usually installed; undefined when there is none. Asks each
 * candidate for its version, so that npx's or nvm's newer Node earlier on PATH is passed over.
 */
export function olderNodeBinary(): string | undefined {
  const onPath = (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((folder) => join(folder, 'node'));
  const candidates = [...new Set([...onPath, ...USUAL_NODE_PATHS])].filter((path) => existsSync(path));
  return candidates.find((path) => {
    try {
      const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 10_000 }).trim();
      return nodeVersionProblem(version) !== undefined;
    } catch {
      return false;
    }
  });
}

/** A script that runs itself again under Node 22 with V8 flags of its own: the soak, the benchmark. */
export interface SecondRun {
  /** What messages call it: 'soak', 'benchmark'. */
  name: string;
  /** The script's own import.meta.url. */
  scriptUrl: string;
  /** V8 flags the second run needs, --expose-gc among them. */
  v8Flags: readonly string[];
  /** Set in the second run, so a Node that still lacks what is needed fails instead of looping. */
  marker: string;
  /** How the second run is started instead of directly (in a namespace of its own, say), and what it adds to its environment. */
  wrap?: (run: StartCommand) => StartCommand;
}

interface StartCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** True in the second run, on a Node that runs the plugin and with gc() exposed. */
export function isSecondRun({ marker }: SecondRun): boolean {
  return currentNodeRunsHomebridge2() && globalThis.gc !== undefined && process.env[marker] !== undefined;
}

/**
 * Runs the script again under Node 22 (from the npm registry on an older Node, as `npm test` does)
 * through tsx with its V8 flags, and resolves with its exit code.
 */
export async function relaunchUnderNode22(run: SecondRun): Promise<number> {
  if (process.env[run.marker] !== undefined) {
    console.error(`The ${run.name} needs Node ${REQUIRED_NODE_MAJOR} or later with ${run.v8Flags.join(' ')}; this is Node ${process.versions.node}.`);
    return 1;
  }
  if (!currentNodeRunsHomebridge2()) {
    console.log(`Node ${process.versions.node} is older than the plugin supports: running the ${run.name} under Node ${REQUIRED_NODE_MAJOR} from the npm registry.`);
  }
  // Resolved before any wrapping: inside a private network there is no registry to download Node from.
  const node = await resolveNode22Binary();
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  const direct: StartCommand = { command: node, args: [tsx, ...run.v8Flags, fileURLToPath(run.scriptUrl), ...process.argv.slice(2)] };
  const { command, args, env = {} } = run.wrap?.(direct) ?? direct;
  const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, [run.marker]: '1', ...env } });
  // Ctrl-C reaches the child from the terminal too; this process only waits for it to finish.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', (signal) => child.kill(signal));
  return new Promise((resolve) => child.once('close', (code) => resolve(code ?? 1)));
}
