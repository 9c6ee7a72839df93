import { isIPv4 } from 'node:net';

/**
 * The simulator stands in for services on the internet, so nothing it does may leave the machine: it
 * binds, answers control requests and delivers notifications on loopback (127.0.0.0/8, ::1 and
 * localhost) and nowhere else.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1') {
    return true;
  }
  return isIPv4(bare) && bare.startsWith('127.');
}

/** A peer address as node:http reports it, where IPv4 may arrive mapped into IPv6 (::ffff:127.0.0.1). */
export function isLoopbackAddress(address: string | undefined): boolean {
  return address !== undefined && isLoopbackHost(address.replace(/^::ffff:/i, ''));
}

/** The host part of a URL: IPv6 literals need brackets. */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
