import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

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
