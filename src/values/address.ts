import { createHash } from 'node:crypto';
import { BlockList, isIP } from 'node:net';

/** Addresses from outside: their checks, the https rule, and the key an account's address gives it. */

/**
 * Addresses a user types: the services' and the relay's URLs, the receiver's public URL and the
 * address it listens on. Each is checked once, when the configuration is read, with the very parser
 * every later step uses (the WHATWG URL parser, as `new URL`, axios and fetch do), so no address that
 * passed can make a later step throw or retry forever.
 */

/**
 * A URL the WHATWG parser accepts, with a port from 1 to 65535 when one is written, and no user name or
 * password. The parser takes `:0` but nothing can be reached there, and refuses 65536 and more
 * (`https://host:99999`) as well as malformed IPv6 (`http://[1::2::3]`). A password in an address
 * would go wherever the address is named: the log says which relay or service it reached.
 */
export function isWebAddress(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && url.port !== '0' && url.username === '' && url.password === '';
}

/** Whether a URL carries a user name or password (`https://user:password@host`). */
export function hasUserInfo(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && (url.username !== '' || url.password !== '');
}

/** `https://host:8443` of a URL: where a message may say a request went, without its path. */
export function originOf(text: string): string {
  return URL.parse(text)?.origin ?? 'an address that is not a URL';
}

/** A DNS name: labels of letters, digits and hyphens, dots between them, 253 characters at most. */
const HOST_NAME = /^(?=.{1,253}\.?$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * An address a server can be told to listen on: an IPv4 or IPv6 address (`0.0.0.0`, `::`,
 * `192.168.1.20`), or a host name. Anything else would reach the system's resolver as a name that can
 * never resolve, or make listening throw (a control character). Dotted digits that are no IPv4
 * address (`1.2.3.256`) are no name either.
 */
export function isListenAddress(text: string): boolean {
  if (isIP(text) !== 0) {
    return true;
  }
  return HOST_NAME.test(text) && !/^[0-9.]+$/.test(text);
}

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

/**
 * An account's key: the name of its folder under the plugin's storage, the same for the plugin and
 * the settings page. It is made from what identifies the account at the service, never from its
 * label or its place in the list, so renaming or reordering accounts keeps each one's session.
 *
 * The first 12 lower-case hex digits of SHA-256 over `<origin> <id>` (one space, UTF-8): with a
 * doorbell access token, which is then what signs the requests, the doorbell server's origin and the
 * token's own SHA-256 (so the key never holds the token); otherwise the account server's origin and
 * the e-mail in lower case. The origin (scheme, host, port) leaves out a path or a trailing slash, so
 * two ways of writing one server give one key.
 */

/** What a key is made from: an account entry's fields as config.json or the settings page's form hold them. */
export interface AccountIdentity {
  account?: { serverUrl: string; email: string };
  doorbellServerUrl?: string;
  doorbellAccessToken?: string;
}

const KEY_LENGTH = 12;

/** The account's key; undefined when the fields hold no usable identity (an address that does not parse). */
export function accountKey({ account, doorbellServerUrl, doorbellAccessToken }: AccountIdentity): string | undefined {
  if (doorbellAccessToken !== undefined) {
    const origin = doorbellServerUrl === undefined ? undefined : keyOrigin(doorbellServerUrl);
    return origin === undefined ? undefined : keyOf(`${origin} ${sha256Hex(doorbellAccessToken)}`);
  }
  if (account === undefined) {
    return undefined;
  }
  const origin = keyOrigin(account.serverUrl);
  return origin === undefined ? undefined : keyOf(`${origin} ${account.email.toLowerCase()}`);
}

function keyOrigin(address: string): string | undefined {
  const url = URL.parse(address);
  // An opaque origin ('null', a scheme without a host) would give every such account one key.
  return url === null || url.origin === 'null' ? undefined : url.origin;
}

function keyOf(text: string): string {
  return sha256Hex(text).slice(0, KEY_LENGTH);
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
