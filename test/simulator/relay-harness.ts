import { afterEach } from '@jest/globals';
import { startRelay } from '../../simulator/relay/index.js';
import type { Relay, RelayOptions } from '../../simulator/relay/index.js';

/** The relay's clock at the start of every test: its messages' `time` is this in seconds. */
export const START_MS = Date.parse('2025-06-01T12:00:00Z');
export const START_S = START_MS / 1000;

/** A relay message id: 12 letters and digits. */
export const ID = /^[A-Za-z0-9]{12}$/;

/** The relays' clock, which a test moves forward; reset to START_MS by every start(). */
export const clock = { ms: START_MS };

const relays: Relay[] = [];

/** A relay on the test's clock, closed after the test. */
export async function start(options: RelayOptions = {}): Promise<Relay> {
  clock.ms = START_MS;
  const relay = await startRelay({ now: () => clock.ms, ...options });
  relays.push(relay);
  return relay;
}

afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
});
