import { AccountClient } from './cloud/account.js';
import { CloudError } from './cloud/errors.js';
import type { RetryPolicy } from './cloud/http.js';
import type { AccountSettings, PlatformSettings } from './config.js';
import { stringsIn } from './log.js';
import type { SecretMaskingLogger } from './log.js';
import type { SessionStore } from './session-store.js';
import { hashCode } from './session-store.js';

/**
 * A sign-in that cannot succeed by trying again: only the user can fix it (a new code, another
 * e-mail). The link stops retrying and says what to do.
 */
export class SignInError extends Error {
  override readonly name = 'SignInError';
}

export interface SignInContext {
  settings: PlatformSettings;
  store: SessionStore;
  log: SecretMaskingLogger;
  signal: AbortSignal;
  /** Tests shorten the retry delays; production uses the default policy. */
  retry?: Partial<RetryPolicy>;
}

/** The bearer token for the doorbell service: configured, stored, or from a login with the code. */
export async function obtainAccessToken(context: SignInContext): Promise<string> {
  const { settings, log } = context;
  if (settings.doorbellAccessToken !== undefined) {
    return settings.doorbellAccessToken;
  }
  const account = requireAccount(settings);
  const stored = await context.store.findSession(account.email, account.serverUrl);
  if (stored !== undefined) {
    rememberLoginSecrets(log, stored.login);
    log.info(`Signed in as ${describeAccount(stored.login.nickname, account.email)} (stored session of ${stored.loggedInAt})`);
    return stored.login.token;
  }
  return loginWithCode(context, account);
}

async function loginWithCode(context: SignInContext, account: AccountSettings): Promise<string> {
  const { store, log, signal } = context;
  const code = account.code;
  if (code === undefined) {
    throw new SignInError(
      `No signed-in session for ${account.email}. Request a verification code for this account in the doorbell app, ` +
        'put it in account.code, and restart Homebridge.',
    );
  }
  if (await store.isCodeSpent(code)) {
    throw new SignInError(
      'The verification code in account.code was already used and is never sent twice. ' +
        'Request a new code in the doorbell app, put it in account.code, and restart Homebridge.',
    );
  }
  const client = new AccountClient({
    serverUrl: account.serverUrl,
    clientId: await store.clientIdFor(account.email),
    logger: log,
    retry: context.retry,
  });
  const region = await client.resolveRegion(account.email, { signal });
  try {
    const login = await client.loginWithCode(
      {
        regionUrl: region.url,
        email: account.email,
        code,
        country: account.country,
        countryCode: account.countryCode,
        majorVersion: account.majorVersion,
        minorVersion: account.minorVersion,
      },
      { signal },
    );
    rememberLoginSecrets(log, login);
    await store.markCodeSpent(code);
    await store.saveSession({
      accountServer: account.serverUrl,
      regionUrl: region.url,
      email: account.email,
      loggedInAt: new Date().toISOString(),
      codeHash: hashCode(code),
      login,
    });
    log.info(`Signed in as ${describeAccount(login.nickname, account.email)}`);
    return login.token;
  } catch (error) {
    // The service answered: this one-time code is used up whatever the answer was.
    if (error instanceof CloudError && error.serviceAnswered) {
      await store.markCodeSpent(code);
    }
    throw error;
  }
}

function requireAccount(settings: PlatformSettings): AccountSettings {
  if (settings.account === undefined) {
    // parseConfig guarantees one of the two; this guards a future change to it.
    throw new SignInError('Set either the account block or doorbellAccessToken.');
  }
  return settings.account;
}

function describeAccount(nickname: string | undefined, email: string): string {
  return nickname !== undefined && nickname !== '' ? `${nickname} (${email})` : email;
}

/** Every string in the login result that grants access is masked from then on. */
function rememberLoginSecrets(log: SecretMaskingLogger, login: { token: string; rriot?: unknown }): void {
  log.addSecrets(login.token, ...stringsIn(login.rriot));
}
