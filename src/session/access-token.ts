import type { PlatformSettings } from '../config/parse-config.js';
import { advice } from './advice.js';
import { describeAccount, rememberLoginSecrets, SignInError, signInWithCode, type SignInContext } from './sign-in.js';

/** How the plugin is told to reach the doorbell service: a token of its own, or an account to sign in with. */
export type Credentials = Pick<PlatformSettings, 'doorbellAccessToken' | 'account'>;

/**
 * The doorbell service's bearer token: the configured one, else the stored session of the configured
 * account (no login request), else a sign-in with account.code when that code was never used.
 */
export async function obtainAccessToken(credentials: Credentials, context: SignInContext): Promise<string> {
  const { store, log } = context;
  if (credentials.doorbellAccessToken !== undefined) {
    return credentials.doorbellAccessToken;
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
    return stored.login.token;
  }
  if (account.code === undefined) {
    throw new SignInError(advice.notSignedIn(account.email), { notSignedIn: true });
  }
  const session = await signInWithCode(account, account.code, context);
  log.info(`Signed in as ${describeAccount(session)}`);
  return session.login.token;
}
