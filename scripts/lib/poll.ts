import { setTimeout as sleep } from 'node:timers/promises';

/** Often enough that a wait ends soon after its condition holds, rare enough to cost nothing. */
const POLL_INTERVAL_MS = 200;

/**
 * Asks `probe` every `intervalMs` until `isDone` accepts its answer, and resolves with that answer.
 * Rejects once `timeoutMs` has passed, quoting the last answer, so a failed wait shows how far things got.
 */
export async function pollUntil<T>(
  probe: () => Promise<T> | T,
  isDone: (value: T) => boolean,
  timeoutMs: number,
  what: string,
  intervalMs = POLL_INTERVAL_MS,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (isDone(value)) {
      return value;
    }
    if (performance.now() + intervalMs > deadline) {
      throw new Error(`${what} did not happen within ${timeoutMs} ms; last seen: ${JSON.stringify(value)}`);
    }
    await sleep(intervalMs);
  }
}
