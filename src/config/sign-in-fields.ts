import { isJsonObject } from '../values/json.js';
import { isRequired, type Problem } from './messages.js';
import type { AccountSettings } from './parse-config.js';
import { withoutTrailingSlashes } from './push-settings.js';
import { checkAccount } from './schema-check.js';

/** What the settings page's sign-in form sends. */
export interface SignInFields {
  serverUrl?: unknown;
  email?: unknown;
  country?: unknown;
  countryCode?: unknown;
  code?: unknown;
}

/** A sign-in the form asked for: the account as the plugin's settings hold it, and the code. */
export type SignInRequest = AccountSettings & { code: string };

export type SignInFieldsResult = { status: 'ok'; request: SignInRequest } | { status: 'invalid'; problems: Problem[] };

/** The account's own fields, which a sign-in on the settings page also stores in config.json; never the code. */
export const ACCOUNT_FIELDS = ['serverUrl', 'email', 'country', 'countryCode'] as const;
const FORM_KEYS = [...ACCOUNT_FIELDS, 'code'] as const;
const VERSION_KEYS = ['majorVersion', 'minorVersion'] as const;

/**
 * The sign-in form's fields, checked by the very rules that check the account block in config.json,
 * with the version numbers of the configured account (the schema's defaults when there is none).
 * Here the code is required; in config.json it is optional.
 */
export function parseSignInFields(fields: SignInFields, configuredAccount: unknown): SignInFieldsResult {
  const configured = isJsonObject(configuredAccount) ? configuredAccount : {};
  const account = {
    ...pick(configured, VERSION_KEYS),
    ...pick(isJsonObject(fields) ? fields : {}, FORM_KEYS),
  };
  const { data, problems } = checkAccount(account);
  const missingCode = account.code === undefined ? [isRequired(['account', 'code'])] : [];
  if (problems.length > 0 || missingCode.length > 0) {
    return { status: 'invalid', problems: [...problems, ...missingCode] };
  }
  const request = data as unknown as SignInRequest;
  return { status: 'ok', request: { ...request, serverUrl: withoutTrailingSlashes(request.serverUrl) } };
}

function pick(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]));
}
