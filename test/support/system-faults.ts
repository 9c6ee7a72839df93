/**
 * Real faults of the operating system, made for one process or one child and undone after: a
 * folder that is read-only or full, and a process with no free file descriptors.
 *
 * A folder as a mount that only a child process has: a read-only view of it, or a small tmpfs over it.
 * The child (`unshare -rm`: user and mount namespaces of its own, so no privilege is needed and nothing
 * changes for the rest of the machine) makes the mount and then waits. This process reaches the mount
 * through `/proc/<child pid>/root`, which shows the child's mounts, until the child is stopped. The file
 * system then behaves as a real read-only mount or a real full disk does: EROFS, ENOSPC, from the kernel.
 */
import { spawn, execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync } from 'node:fs';

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
      const settle = (error?: Error) => {
        clearTimeout(timer);
        return error === undefined ? resolve() : reject(error);
      };
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && settle());
      child.once('exit', (code) => settle(new Error(`unshare -rm could not mount ${folder} (exit ${code}): ${stderr.trim()}`)));
      child.once('error', settle);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { path: `/proc/${pid}/root${folder}`, stop };
}

/** Room above the highest descriptor held; all of it is filled, so its size only bounds the loop. */
const HEADROOM = 64;

/** prlimit on this process's own pid: lowering its limits needs no privilege. */
const prlimit = (...args: string[]) => execFileSync('prlimit', ['--pid', String(process.pid), ...args], { encoding: 'utf8' });

/**
 * A real "too many open files" (EMFILE) in this process, for as long as `work` runs: what a flood of
 * connections does to a Homebridge host. The process's limit on open files is lowered to a little
 * above the highest descriptor it holds, and the few numbers left are taken by /dev/null, so every
 * open, socket and accept fails until the work is done. Then they are closed and the limit restored.
 * Resolves with what `work` resolved with, or rejects as it did.
 */
export async function withoutFreeDescriptors<T>(work: () => Promise<T>): Promise<T> {
  const [soft, hard] = prlimit('--nofile', '--raw', '--noheadings', '--output=SOFT,HARD').trim().split(/\s+/);
  const highest = Math.max(...readdirSync('/proc/self/fd').map(Number));
  prlimit(`--nofile=${highest + HEADROOM}:${hard}`);
  const fillers: number[] = [];
  try {
    for (let count = 0; count <= highest + HEADROOM; count += 1) {
      try {
        fillers.push(openSync('/dev/null', 'r'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EMFILE') {
          break;
        }
        throw error;
      }
    }
    return await work();
  } finally {
    fillers.forEach((fd) => closeSync(fd));
    prlimit(`--nofile=${soft}:${hard}`);
  }
}
