import { BlockList, isIP } from 'node:net';

/**
 * The https rule: the verification code, the session token, the push token and the relay token only
 * travel over https. Plain http is allowed to loopback hosts, which never leave the machine, for
 * local testing.
 */

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8, ::1 and localhost. `hostname` as URL gives it: IPv6 in brackets. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost') {
    return true;
  }
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** Undefined when secrets may be sent to `baseUrl`; otherwise why not, in words that name only its origin. */
export function insecureUrlProblem(baseUrl: string): string | undefined {
  const url = URL.parse(baseUrl);
  if (url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return undefined;
  }
  const shown = url === null ? 'an address that is not a URL' : `${url.protocol}//${url.host}`;
  return `${shown}; use an https:// address (plain http:// is allowed to loopback addresses only)`;
}
