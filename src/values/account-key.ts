import { createHash } from 'node:crypto';

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
    const origin = doorbellServerUrl === undefined ? undefined : originOf(doorbellServerUrl);
    return origin === undefined ? undefined : keyOf(`${origin} ${sha256Hex(doorbellAccessToken)}`);
  }
  if (account === undefined) {
    return undefined;
  }
  const origin = originOf(account.serverUrl);
  return origin === undefined ? undefined : keyOf(`${origin} ${account.email.toLowerCase()}`);
}

function originOf(address: string): string | undefined {
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
