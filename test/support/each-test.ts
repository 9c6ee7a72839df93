import { afterEach, beforeEach } from '@jest/globals';
import { startSimulator } from '../../simulator/index.js';
import type { Simulator, SimulatorOptions } from '../../simulator/index.js';

/**
 * What `start` gives, fresh for every test of the enclosing block: started before any of the block's
 * own beforeEach hooks that come later, and closed after the test. Call the getter inside tests and hooks.
 */
export function eachTest<T>(what: string, start: () => Promise<T>, close: (value: T) => Promise<unknown>): () => T {
  let value: T | undefined;
  beforeEach(async () => {
    value = await start();
  });
  afterEach(async () => {
    if (value !== undefined) {
      await close(value);
    }
    value = undefined;
  });
  return () => {
    if (value === undefined) {
      throw new Error(`The ${what} starts in beforeEach; use it inside tests and hooks`);
    }
    return value;
  };
}

export function useSimulator(options: SimulatorOptions = {}): () => Simulator {
  return eachTest('simulator', () => startSimulator(options), (simulator) => simulator.close());
}
