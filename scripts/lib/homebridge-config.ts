import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { quietPort } from '../../simulator/servers.js';

const LOOPBACK = '127.0.0.1';

const LOOPBACK_ADVERTISING = {
  // Restricts the mDNS advertisement to loopback. hap-nodejs still listens on the unspecified
  // address whatever `bind` says; the loopback guard moves that listener.
  bind: [LOOPBACK],
  // hap-nodejs's own advertiser: it needs no system daemon. "avahi" and "resolved" need D-Bus
  // services this machine lacks (hap-nodejs then falls back to ciao with an error line), and
  // controllers here connect by address and port, so nothing depends on discovery working.
  advertiser: 'ciao',
};

export interface BridgeSettings {
  name: string;
  /** The bridge's HAP identity, a MAC-address-like string such as `0E:42:00:00:00:01`. */
  username: string;
  port: number;
  /** `XXX-XX-XXX`, as HAP and hap-controller expect it. */
  pin: string;
  /** Publishes the bridge over Matter too (Homebridge 2), on this port. */
  matter?: { port: number };
  /** Interfaces (names or addresses) for mDNS, HAP's and Matter's; loopback only when absent. */
  bind?: string[];
}

/** What a reused storage keeps of its bridge: the HomeKit pairing belongs to this identity. */
export type BridgeIdentity = Pick<BridgeSettings, 'username' | 'pin'>;

export interface HomebridgeConfig {
  bridge: BridgeSettings;
  /** Platform blocks as they appear in config.json; none means no plugin is started. */
  platforms?: Array<Record<string, unknown>>;
  /** On unless turned off: off leaves mDNS to Homebridge's defaults, advertising on every network. */
  loopbackOnly?: boolean;
}

/** Writes `<storagePath>/config.json`, creating the folder when needed. */
export async function writeHomebridgeConfig(
  storagePath: string,
  { bridge, platforms = [], loopbackOnly = true }: HomebridgeConfig,
): Promise<void> {
  const config = {
    bridge: loopbackOnly ? { ...LOOPBACK_ADVERTISING, ...bridge } : bridge,
    accessories: [],
    platforms,
  };
  await mkdir(storagePath, { recursive: true });
  await writeFile(join(storagePath, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
}

/** A TCP port that was free on loopback a moment ago, below the ephemeral range (see QUIET_PORTS). */
export async function freeLoopbackPort(): Promise<number> {
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt += 1) {
    const port = quietPort();
    if ((await listenOnce(port)) !== undefined) {
      return port;
    }
  }
  return (await listenOnce(0)) ?? 0;
}

const PORT_ATTEMPTS = 50;

/** The port listened on and closed again; undefined when it is in use. */
async function listenOnce(port: number): Promise<number | undefined> {
  const server = createServer();
  try {
    server.listen(port, LOOPBACK);
    await once(server, 'listening');
  } catch {
    return undefined;
  }
  const { port: bound } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return bound;
}

/**
 * A bridge identity for a new Homebridge storage (a demo folder, an end-to-end sandbox). Random rather than fixed, since the bridge is pairable on
 * the local network: two demos there must not share a HAP identity, nor everyone one setup code.
 */
export function newBridgeIdentity(): BridgeIdentity {
  const octets = randomBytes(6);
  // A locally administered unicast address: it can never be a real device's MAC.
  octets[0] = (octets[0] & 0xfc) | 0x02;
  const username = [...octets].map((octet) => octet.toString(16).padStart(2, '0').toUpperCase()).join(':');
  const digits = String(randomInt(100_000_000)).padStart(8, '0');
  return { username, pin: `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}` };
}
