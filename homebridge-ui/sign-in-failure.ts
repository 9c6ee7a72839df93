import { STATUS_CODES } from 'node:http';
import { REGION_PATH } from '#plugin/cloud/account.js';
import { CloudError } from '#plugin/cloud/errors.js';
import type { Problem } from '#plugin/config/messages.js';
import { errorMessage } from '#plugin/log.js';
import { FREE_SPACE, HOW_TO_SIGN_IN } from '#plugin/session/advice.js';
import { CodeUnderWayError, SessionNotSavedError, SignInError } from '#plugin/session/sign-in.js';
import { originOf } from '#plugin/values/address.js';

/**
 * Why a sign-in from the settings page failed, in the words the plugin's log uses where it has them
 * (session/advice.ts), so the page and the log never disagree, but for how to sign in again: the log
 * sends the user to this page, or to config.json without the Homebridge UI; here the form is right above.
 */

/** The sign-in form's labels, and what each field takes, as the page shows them. */
const FIELDS: Readonly<Record<string, { label: string; expected: string }>> = {
  serverUrl: { label: 'Account server', expected: 'an https:// address (http:// only for localhost), with a port from 1 to 65535 if it has one' },
  email: { label: 'E-mail', expected: 'an e-mail address, like you@example.com' },
  country: { label: 'Country', expected: '2 capital letters, like US' },
  countryCode: { label: 'Country calling code', expected: '1 to 4 digits, like 1 or 49' },
  code: { label: 'Verification code', expected: 'the 6 digits the doorbell app shows' },
};

const CODE_KEPT = 'The code was not used up: you can sign in with it again.';

/** The log's advice on getting a new session (a wrong, expired, spent or busy code), in the page's words. */
const HOW_TO_SIGN_IN_HERE = 'request a new verification code in the doorbell app and sign in with it above';

/** One sentence per field; a problem outside the form (a configured version number) in the log's words. */
export function describeFieldProblems(problems: readonly Problem[]): string {
  const sentences = problems.map(({ path, message }) => {
    const field = path[0] === 'account' && path.length === 2 ? FIELDS[String(path[1])] : undefined;
    if (field === undefined) {
      return `${message}.`;
    }
    return message.endsWith(' is required') ? `${field.label} is required.` : `${field.label} must be ${field.expected}.`;
  });
  return `Not signed in: ${[...new Set(sentences)].join(' ')}`;
}

/** Every failure of signInWithCode as one message; `serverUrl` is the account server it was sent to. */
export function describeSignInFailure(error: unknown, serverUrl: string): string {
  if (error instanceof SessionNotSavedError) {
    return `Signed in, but the session could not be saved (${error.reason}), so nothing was kept: ${FREE_SPACE}, then ${HOW_TO_SIGN_IN_HERE}.`;
  }
  if (error instanceof SignInError || error instanceof CodeUnderWayError) {
    return error.message.replace(HOW_TO_SIGN_IN, HOW_TO_SIGN_IN_HERE);
  }
  if (!(error instanceof CloudError)) {
    return `Sign-in failed: ${errorMessage(error)}`;
  }
  const where = error.path === REGION_PATH ? `the account service at ${originOf(serverUrl)}` : "the account service's regional address";
  switch (error.kind) {
    case 'network':
      return `Could not reach ${where}: check the address and the network. ${CODE_KEPT}`;
    case 'timeout':
      return `No answer in time from ${where}: try again in a moment. ${CODE_KEPT}`;
    case 'malformed':
    case 'too-large':
      return `The answer from ${where} is not the account service's: check the Account server address. ${CODE_KEPT}`;
    default:
      return `${capitalised(where)} is not available (HTTP ${describeStatus(error.status)}): try again later. ${CODE_KEPT}`;
  }
}

function describeStatus(status: number | undefined): string {
  return status === undefined ? 'no status' : `${status} ${STATUS_CODES[status] ?? ''}`.trim();
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
