import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
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
