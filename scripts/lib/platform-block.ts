/**
 * The DoorbellMotion block of config.json for a plugin that talks to the simulator on this machine:
 * the platform tests, the end-to-end scenarios and the demo all start from it.
 */
import { PLATFORM_NAME } from '../../src/settings.js';

export interface LoopbackEndpoints {
  accountUrl: string;
  doorbellUrl: string;
  /** Relay mode: the loopback push relay (`simulator/relay`). */
  relayUrl?: string;
  /** Direct mode (without relayUrl): the push receiver's port on 127.0.0.1. */
  pushPort?: number;
}

export interface LoopbackAccount {
  email: string;
  code?: string;
  country?: string;
  countryCode?: string;
}

export interface LoopbackPlatform {
  /** The platform's `name`: Homebridge prefixes every plugin log line with it. */
  name: string;
  account: LoopbackAccount;
  doorbells: ReadonlyArray<{ deviceId: string | number; name?: string }>;
  motionTimeout: number;
}

/**
 * Relay mode when the endpoints have a relay, else direct mode with the receiver on loopback,
 * registered at a loopback address: the simulator delivers to loopback only (the default public
 * address is this machine's first LAN address).
 */
export function loopbackPlatformBlock(
  endpoints: LoopbackEndpoints,
  { name, account, doorbells, motionTimeout }: LoopbackPlatform,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    platform: PLATFORM_NAME,
    name,
    account: { serverUrl: endpoints.accountUrl, country: 'US', countryCode: '1', ...account },
    doorbellServerUrl: endpoints.doorbellUrl,
    doorbells,
    motionTimeout,
    push: pushBlock(endpoints),
    ...overrides,
  };
}

function pushBlock({ relayUrl, pushPort }: LoopbackEndpoints): Record<string, unknown> {
  if (relayUrl !== undefined) {
    return { mode: 'relay', relayUrl };
  }
  if (pushPort === undefined) {
    throw new Error('a loopback platform block needs a relayUrl or a pushPort');
  }
  return { mode: 'direct', host: '127.0.0.1', port: pushPort, publicUrl: `http://127.0.0.1:${pushPort}` };
}
