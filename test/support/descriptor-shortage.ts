/**
 * A real "too many open files" (EMFILE) in this process, for as long as a piece of work runs: what a
 * flood of connections does to a Homebridge host. The process's own limit on open files is lowered to
 * a little above the highest descriptor it holds (prlimit on its own pid: lowering needs no
 * privilege), and the few numbers left are taken by /dev/null, so every open, socket and accept fails
 * until the work is done. Then they are closed and the limit restored.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync } from 'node:fs';

/** Room above the highest descriptor held; all of it is filled, so its size only bounds the loop. */
const HEADROOM = 64;

interface Limit {
  soft: string;
  hard: string;
}

function nofileLimit(): Limit {
  const output = execFileSync('prlimit', ['--pid', String(process.pid), '--nofile', '--raw', '--noheadings', '--output=SOFT,HARD'], { encoding: 'utf8' });
  const [soft, hard] = output.trim().split(/\s+/);
  if (soft === undefined || hard === undefined) {
    throw new Error(`prlimit said ${JSON.stringify(output)}`);
  }
  return { soft, hard };
}

function setNofileLimit({ soft, hard }: Limit): void {
  execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${soft}:${hard}`]);
}

/** Resolves with what `work` resolved with, or rejects as it did; the process has its descriptors back either way. */
export async function withoutFreeDescriptors<T>(work: () => Promise<T>): Promise<T> {
  const limit = nofileLimit();
  const highest = Math.max(...readdirSync('/proc/self/fd').map(Number));
  setNofileLimit({ soft: String(highest + HEADROOM), hard: limit.hard });
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
    setNofileLimit(limit);
  }
}
