import { jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';

/** Real time, which the tests' fake timers leave alone (they never fake `hrtime`). */
const realMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Under jest's fake timers: moves the fake clock on by `stepMs` each turn (0: not at all, only running
 * what is due), letting real I/O run between turns, until `condition` holds. Rejects after `timeoutMs`
 * of real time, so a wait for something that never comes fails with its name.
 */
export async function runUntil(condition: () => boolean | Promise<boolean>, what: string, stepMs = 1, timeoutMs = 15_000): Promise<void> {
  const deadline = realMs() + timeoutMs;
  while (!(await condition())) {
    if (realMs() > deadline) {
      throw new Error(`Gave up waiting for ${what}`);
    }
    await jest.advanceTimersByTimeAsync(stepMs);
    await sleep(1);
  }
}
