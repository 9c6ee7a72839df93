import { accountKey, type AccountIdentity } from '#plugin/values/address.js';
import { withoutTrailingSlashes } from '#plugin/config/push-settings.js';
import { isJsonObject, isNonEmptyString } from '#plugin/values/json.js';

/**
 * Which account of `accounts` a request of the settings page is for. The page sends the entry's own
 * fields as its form holds them, saved or not, never its place in the list: the list may have changed
 * since config.json was written, and an account added in the form but not saved yet works the same.
 * The account's key (accountKey, in the plugin's values/address.ts) is made from those fields, so it names the account's folder
 * whatever its label or its place.
 */
export interface AccountEntry {
  /** The entry's account block as the form holds it; only strings count. */
  account: { serverUrl?: string; email?: string } & Record<string, unknown>;
  doorbellServerUrl?: string;
  doorbellAccessToken?: string;
  /** Its key; undefined while the fields give none (a new entry not signed in yet). */
  key: string | undefined;
}

/**
 * The request's `entry`, when it has one: a request without it is for the one account at the top of
 * the block, as before `accounts` existed.
 */
export function accountEntryOf(body: unknown): AccountEntry | undefined {
  const entry = isJsonObject(body) ? body.entry : undefined;
  if (!isJsonObject(entry)) {
    return undefined;
  }
  const account = isJsonObject(entry.account) ? entry.account : {};
  const fields = {
    account,
    doorbellServerUrl: nonEmpty(entry.doorbellServerUrl),
    doorbellAccessToken: nonEmpty(entry.doorbellAccessToken),
  };
  return { ...fields, key: keyOf(fields) };
}

/** The key of an entry's fields, as the plugin makes it from config.json (account server without its trailing slashes). */
export function keyOf({ account, doorbellServerUrl, doorbellAccessToken }: { account?: unknown; doorbellServerUrl?: unknown; doorbellAccessToken?: unknown }): string | undefined {
  const identity: AccountIdentity = {};
  const serverUrl = isJsonObject(account) ? nonEmpty(account.serverUrl) : undefined;
  const email = isJsonObject(account) ? nonEmpty(account.email) : undefined;
  if (serverUrl !== undefined && email !== undefined) {
    identity.account = { serverUrl: withoutTrailingSlashes(serverUrl), email };
  }
  const token = nonEmpty(doorbellAccessToken);
  if (token !== undefined) {
    identity.doorbellAccessToken = token;
    identity.doorbellServerUrl = nonEmpty(doorbellServerUrl);
  }
  return accountKey(identity);
}

/** The entry of the saved block's `accounts` with this key: the one the request is for, as config.json holds it. */
export function savedEntryOf(block: unknown, key: string | undefined): Record<string, unknown> | undefined {
  const entries = isJsonObject(block) && Array.isArray(block.accounts) ? (block.accounts as unknown[]) : [];
  return key === undefined ? undefined : entries.find((entry): entry is Record<string, unknown> => isJsonObject(entry) && keyOf(entry) === key);
}

function nonEmpty(value: unknown): string | undefined {
  return isNonEmptyString(value) && value.trim() !== '' ? value : undefined;
}

/**
 * What config.json holds for the account with this key: its entry of `accounts`, or the block itself
 * when the one account at the top is that account (the form has moved it into `accounts`, not saved yet).
 */
export function savedAccountOf(block: unknown, key: string | undefined): Record<string, unknown> | undefined {
  const entry = savedEntryOf(block, key);
  if (entry !== undefined || !isJsonObject(block) || key === undefined) {
    return entry;
  }
  return keyOf(block) === key ? block : undefined;
}
