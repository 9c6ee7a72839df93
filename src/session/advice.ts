import type { CloudError } from '../cloud/errors.js';
import { CLAIM_LIFETIME_MS } from './session-store.js';

/**
 * What the user should do when signing in failed or a session ended: the one place these words are
 * written, so the log and every other place that shows them say the same thing.
 */

/**
 * How to get a new session. The settings page is the usual way; account.code serves set-ups without
 * the Homebridge UI. The settings page shows its own words in place of these, its form being right there.
 */
export const HOW_TO_SIGN_IN =
  "request a new verification code in the doorbell app and sign in with it on the plugin's settings page in the Homebridge UI " +
  '(without the UI: put it in account.code and restart Homebridge)';

/** What makes a session that could not be written (a full disk, read-only storage) writable again. */
export const FREE_SPACE = "free space on the disk that holds Homebridge's storage (or make that folder writable)";

/** What to do about each code the account service is known to refuse a sign-in with. */
const WHAT_TO_DO: Readonly<Record<number, string>> = {
  1002: 'Check the e-mail address, the country and the country code.',
  2008: 'Check the e-mail address and the account server address.',
  2010: `Sign in again: ${HOW_TO_SIGN_IN}.`,
  2018: `Sign in again: ${HOW_TO_SIGN_IN}.`,
  3006: 'Raise account.majorVersion (Sign-in Version (Major) under Advanced in the plugin settings), then sign in again.',
  3039: 'Check the e-mail address and the account server address.',
  9002: 'Wait a while (an hour, say) before signing in again.',
};

export const advice = {
  notSignedIn: (email: string): string => `Not signed in as ${email}: ${HOW_TO_SIGN_IN}.`,
  codeSpent: `This verification code was already used, and a code is never sent twice: ${HOW_TO_SIGN_IN}.`,
  codeUnderWay:
    'A sign-in with this verification code is already under way, and a code is never sent twice at once. ' +
    `If that sign-in was cut off (the settings page closed, or Homebridge restarted), the code can be used again ${CLAIM_LIFETIME_MS / 60_000} minutes after it began; ` +
    `or ${HOW_TO_SIGN_IN}.`,
  sessionRejected: `The doorbell service no longer accepts this session. Sign in again: ${HOW_TO_SIGN_IN}.`,
  tokenRejected: 'The doorbell service no longer accepts doorbellAccessToken: replace it and restart Homebridge.',
  signedOut: 'Signed out on the settings page: every doorbell shows a fault until you sign in again.',
  /** With several accounts, the log line already names the account: only its doorbells are affected. */
  accountSignedOut: "Signed out on the settings page: this account's doorbells show a fault until you sign in again; the other accounts' go on.",
  sessionNotSaved: (signedIn: string, reason: string): string =>
    `Signed in as ${signedIn}, but the session could not be saved (${reason}): it is used until Homebridge restarts. ` +
    `To keep it, ${FREE_SPACE}, then sign in again: ${HOW_TO_SIGN_IN}.`,
  otherAccount: (signedIn: string, configured: string): string =>
    `The settings page signed in as ${signedIn}, but this Homebridge is set up for ${configured}: restart Homebridge to use the new account.`,
};

/** A sign-in the service refused, or that the plugin refused to send: what happened and what to do. */
export function describeRefusedSignIn(error: CloudError): string {
  if (error.kind === 'insecure') {
    return `Sign-in stopped: the verification code is only sent over https, and ${error.message}.`;
  }
  const code = error.serviceCode;
  const what = error.serviceCodeMeaning ?? (code === undefined ? `the service answered HTTP ${error.status}` : 'the service refused it');
  const next = (code === undefined ? undefined : WHAT_TO_DO[code]) ?? 'Check the account settings, then sign in again.';
  return `Sign-in refused: ${what}${code === undefined ? '' : ` (service code ${code})`}. ${next}`;
}
