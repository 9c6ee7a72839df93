/**
 * A folder as a mount that only a child process has: a read-only view of it, or a small tmpfs over it.
 * The child (`unshare -rm`: user and mount namespaces of its own, so no privilege is needed and nothing
 * changes for the rest of the machine) makes the mount and then waits. This process reaches the mount
 * through `/proc/<child pid>/root`, which shows the child's mounts, until the child is stopped. The file
 * system then behaves as a real read-only mount or a real full disk does: EROFS, ENOSPC, from the kernel.
 */
import { spawn } from 'node:child_process';

/** The child's own limit, should a test never stop it. */
const LIFETIME_S = 300;
const READY_TIMEOUT_MS = 5_000;

export interface PrivateMount {
  /** The mounted folder, as this process reaches it. */
  readonly path: string;
  stop(): Promise<void>;
}

/** `folder` (absolute), read-only: its files can be read but not changed, by anyone, root included. */
export function readOnlyView(folder: string): Promise<PrivateMount> {
  return mountInChild(folder, 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"');
}

/** An empty tmpfs of `bytes` over `folder` (absolute): it holds that much and then answers ENOSPC. */
export function smallTmpfs(folder: string, bytes: number): Promise<PrivateMount> {
  return mountInChild(folder, `mount -t tmpfs -o size=${bytes},mode=0755 tmpfs "$1"`);
}

async function mountInChild(folder: string, mountCommand: string): Promise<PrivateMount> {
  const script = `${mountCommand} && echo ready && exec sleep ${LIFETIME_S}`;
  const child = spawn('unshare', ['-rm', 'sh', '-c', script, 'sh', folder], { stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const stop = async () => {
    if (pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the mount in a private namespace was not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`unshare -rm could not mount ${folder} (exit ${code}): ${stderr.trim()}`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  if (pid === undefined) {
    throw new Error('unshare started without a pid');
  }
  return { path: `/proc/${pid}/root${folder}`, stop };
}
