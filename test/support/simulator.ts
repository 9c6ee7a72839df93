import { afterEach, beforeEach } from '@jest/globals';
import { startSimulator } from '../../simulator/index.js';
import type { Simulator, SimulatorOptions } from '../../simulator/index.js';

/**
 * A fresh simulator for every test of the enclosing block, started before any of the block's own
 * beforeEach hooks that come later and closed after the test. Call the getter inside tests and hooks.
 */
export function useSimulator(options: SimulatorOptions = {}): () => Simulator {
  let simulator: Simulator | undefined;
  beforeEach(async () => {
    simulator = await startSimulator(options);
  });
  afterEach(async () => {
    await simulator?.close();
    simulator = undefined;
  });
  return () => {
    if (simulator === undefined) {
      throw new Error('The simulator starts in beforeEach; use it inside tests and hooks');
    }
    return simulator;
  };
}
