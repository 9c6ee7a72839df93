import { BlockList, isIP } from 'node:net';
import os from 'node:os';
import { isLoopbackHost } from '../values/address.js';
import type { SchemaPush } from './config-schema.js';

/** The relay settings, its address without a trailing slash and ntfy.sh by default; what the relay stream is opened with. */
export type RelaySettings = Pick<SchemaPush, 'relayToken'> & Required<Pick<SchemaPush, 'relayUrl'>>;

/** How notifications reach the plugin, and what the push registration sends. */
export interface PushSettings {
  mode: NonNullable<SchemaPush['mode']>;
  relay: RelaySettings;
  /** publicUrl without a trailing slash; by default this machine's first IPv4 address and the port. */
  direct: Pick<SchemaPush, 'host' | 'port'> & Required<Pick<SchemaPush, 'publicUrl'>>;
  /** Sent with the push registration as pn_service, os and pn_dict_version; os is this machine's by default. */
  registration: Pick<SchemaPush, 'service' | 'dictVersion'> & Required<Pick<SchemaPush, 'os'>>;
}

/** What the settings read from the machine, injectable for tests. */
export interface Environment {
  networkInterfaces?: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  platform?: string;
}

/** The public ntfy server: nothing to set up. A self-hosted ntfy works the same. */
const DEFAULT_RELAY_URL = 'https://ntfy.sh';

/** Relay unless the user gave an address the push service can reach the receiver at. */
export function toPushSettings(push: SchemaPush, environment: Environment): PushSettings {
  const mode = push.mode ?? (push.publicUrl === undefined ? 'relay' : 'direct');
  const lanAddress = () => firstLanAddress(environment.networkInterfaces ?? os.networkInterfaces);
  return {
    mode,
    relay: {
      relayUrl: withoutTrailingSlashes(push.relayUrl ?? DEFAULT_RELAY_URL),
      ...(push.relayToken === undefined ? {} : { relayToken: push.relayToken }),
    },
    direct: {
      host: push.host,
      port: push.port,
      publicUrl: push.publicUrl === undefined ? `http://${lanAddress()}:${push.port}` : withoutTrailingSlashes(push.publicUrl),
    },
    registration: { service: push.service, os: push.os ?? environment.platform ?? process.platform, dictVersion: push.dictVersion },
  };
}

/** Paths are appended to these addresses, so `https://x/` must not become `https://x//api`. */
export function withoutTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The first IPv4 address other machines can reach; loopback on a machine without a network. */
function firstLanAddress(networkInterfaces: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>): string {
  const lan = Object.values(networkInterfaces())
    .flat()
    .find((address) => address?.family === 'IPv4' && !address.internal);
  return lan?.address ?? '127.0.0.1';
}

const NOT_ON_THE_INTERNET = new BlockList();
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['169.254.0.0', 16], ['100.64.0.0', 10]] as const) {
  NOT_ON_THE_INTERNET.addSubnet(network, prefix, 'ipv4');
}
NOT_ON_THE_INTERNET.addAddress('::', 'ipv6');
NOT_ON_THE_INTERNET.addSubnet('fc00::', 7, 'ipv6');
NOT_ON_THE_INTERNET.addSubnet('fe80::', 10, 'ipv6');

/**
 * Loopback, private (RFC 1918, unique local, shared address space), link-local, "this network"
 * (0.0.0.0/8 and `::`, which only mean this machine), or a `.local` mDNS name. An IPv4 address
 * written IPv6-style (`[::ffff:192.168.1.2]`) is judged as the IPv4 address: BlockList maps it.
 */
function isUnreachableFromInternet(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (isLoopbackHost(host) || host.endsWith('.local')) {
    return true;
  }
  const family = isIP(host);
  return family !== 0 && NOT_ON_THE_INTERNET.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** Start-up warnings about where direct mode asks the cloud to deliver; none in relay mode. */
export function pushAddressWarnings({ mode, direct }: PushSettings): string[] {
  if (mode !== 'direct') {
    return [];
  }
  // The configuration check let only a URL through that parses; should one not, a warning is not worth a throw.
  const url = URL.parse(direct.publicUrl);
  if (url === null) {
    return [];
  }
  if (isUnreachableFromInternet(url.hostname)) {
    return [
      `push.publicUrl ${url.origin} is a local address that a cloud service cannot reach, so motion alerts will not arrive. ` +
        'Use relay mode (push.mode "relay", the default without push.publicUrl), or set push.publicUrl to an address reachable from the internet.',
    ];
  }
  if (url.protocol === 'http:') {
    return [
      `push.publicUrl ${url.origin} is plain http: every delivery, the secret path included, crosses the internet unencrypted. ` +
        'Put an https reverse proxy in front of the receiver, or use relay mode.',
    ];
  }
  return [];
}
