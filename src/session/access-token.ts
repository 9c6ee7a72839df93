import type { PlatformSettings } from '../config/parse-config.js';
import { advice } from './advice.js';
import { describeAccount, rememberLoginSecrets, SessionNotSavedError, SignInError, signInWithCode, type SignInContext } from './sign-in.js';

/** How the plugin is told to reach the doorbell service: a token of its own, or an account to sign in with. */
export type Credentials = Pick<PlatformSettings, 'doorbellAccessToken' | 'account'>;

/** The token to call the doorbell service with, and when its session was signed in (none for a configured token). */
export interface AccessToken {
  token: string;
  /** The session's `loggedInAt` as stored: the settings page tells by it whether the plugin uses its sign-in. */
  signedInAt?: string;
  /** From a sign-in with account.code whose session could not be written: good for this run only. */
  unsaved: boolean;
}

/**
 * The doorbell service's bearer token: the configured one, else the stored session of the configured
 * account (no login request), else a sign-in with account.code when that code was never used. A
 * sign-in whose session cannot be written is not thrown away: its code is spent, so it is used for
 * this run, and the log says how to keep the next one.
 */
export async function obtainAccessToken(credentials: Credentials, context: SignInContext): Promise<AccessToken> {
  const { store, log } = context;
  if (credentials.doorbellAccessToken !== undefined) {
    return { token: credentials.doorbellAccessToken, unsaved: false };
  }
  const { account } = credentials;
  if (account === undefined) {
    // The config check guarantees one of the two; this guards a future change to it.
    throw new SignInError('Set either the account or doorbellAccessToken.');
  }
  const stored = await store.findSession(account.email, account.serverUrl);
  if (stored !== undefined) {
    rememberLoginSecrets(log, stored.login);
    log.info(`Signed in as ${describeAccount(stored)} (stored session of ${stored.loggedInAt})`);
    return { token: stored.login.token, signedInAt: stored.loggedInAt, unsaved: false };
  }
  if (account.code === undefined) {
    throw new SignInError(advice.notSignedIn(account.email), { notSignedIn: true });
  }
  try {
    const session = await signInWithCode(account, account.code, context);
    log.info(`Signed in as ${describeAccount(session)}`);
    return { token: session.login.token, signedInAt: session.loggedInAt, unsaved: false };
  } catch (error) {
    if (!(error instanceof SessionNotSavedError)) {
      throw error;
    }
    log.warn(advice.sessionNotSaved(describeAccount(error.session), error.reason));
    return { token: error.session.login.token, signedInAt: error.session.loggedInAt, unsaved: true };
  }
}
