import { AccountClient, type LoginResult, type RegionInfo } from '../cloud/account.js';
import { CloudError } from '../cloud/errors.js';
import type { RetryPolicy } from '../cloud/retry-policy.js';
import type { AccountSettings, PlatformSettings } from '../config/parse-config.js';
import { errorMessage, type SecretMaskingLogger, stringsIn } from '../log.js';
import { describeFileError } from '../storage/file-errors.js';
import { advice, describeRefusedSignIn } from './advice.js';
import { type CodeState, hashCode, type SessionStore, type StoredSession } from './session-store.js';

/**
 * Signing in with a one-time code, and the token the connection uses: configured, stored, or from a
 * sign-in.
 */

/**
 * A sign-in that cannot succeed by trying again: only the user can fix it (a new code, another
 * e-mail). Nothing retries it; its message says what to do. Any other failure (no answer, a busy
 * server, an answer that is not the service's) may be retried with the same code.
 */
export class SignInError extends Error {
  override readonly name = 'SignInError';
  /** Nothing failed: there is no session yet and no code to sign in with, as at the first start. */
  readonly notSignedIn: boolean;

  constructor(message: string, options: ErrorOptions & { notSignedIn?: boolean } = {}) {
    super(message, options);
    this.notSignedIn = options.notSignedIn ?? false;
  }
}

/**
 * The code is claimed by a sign-in still under way, in this process or the other one. Not the user's
 * to fix: that sign-in either gets the service's decision or, cut off, its claim expires, so asking
 * again later may well work.
 */
export class CodeUnderWayError extends Error {
  override readonly name = 'CodeUnderWayError';
}

/**
 * The service signed in, but the session could not be written (a full disk, read-only storage). The
 * login is good and its code spent, so the session comes with the error: whoever signed in decides
 * whether to keep it in memory. The message says why, never what the session holds.
 */
export class SessionNotSavedError extends Error {
  override readonly name = 'SessionNotSavedError';

  constructor(
    readonly session: StoredSession,
    /** Why it could not be written, in words: "the disk is full (ENOSPC)". */
    readonly reason: string,
    options: ErrorOptions,
  ) {
    super(`Signed in, but the session could not be saved: ${reason}.`, options);
  }
}

/** The account a sign-in is for, as the plugin's settings and the settings page both have it; the code comes apart. */
export type SignInAccount = Omit<AccountSettings, 'code'>;

export interface SignInContext {
  store: SessionStore;
  /** Learns the session's secrets the moment they arrive, so no later line can show them. */
  log: SecretMaskingLogger;
  signal?: AbortSignal;
  /** Tests shorten the retry delays and the request timeout; production uses the defaults. */
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
}

/**
 * Region, then login at the regional address, with a one-time code; saves and returns the session.
 * The code is spent once the service has answered it, whatever the answer, and is never sent again.
 * A session that cannot be saved throws a SessionNotSavedError holding it: the login is not lost.
 */
export async function signInWithCode(account: SignInAccount, code: string, context: SignInContext): Promise<StoredSession> {
  const { store, log } = context;
  log.addSecrets(code);
  const state = await store.codeState(code);
  if (state !== 'unused') {
    throw codeNotFree(state);
  }
  const client = new AccountClient({
    serverUrl: account.serverUrl,
    clientId: await store.clientIdFor(account.email),
    logger: log,
    retry: context.retry,
    timeoutMs: context.timeoutMs,
  });
  try {
    const region = await resolveRegionClaimingCode(client, account.email, code, context);
    const login = await loginSpendingCode(client, { ...account, regionUrl: region.url, code }, context);
    rememberLoginSecrets(log, login);
    const session = {
      accountServer: account.serverUrl,
      regionUrl: region.url,
      email: account.email,
      loggedInAt: new Date().toISOString(),
      codeHash: hashCode(code),
      login,
    };
    // Saved before the code is recorded as spent: a process that ends in between keeps its login,
    // and the code's claim still keeps anyone from sending it meanwhile.
    const saveFailure = await store.saveSession(session).then(
      () => undefined,
      (error: unknown) => error,
    );
    await spend(code, context);
    if (saveFailure !== undefined) {
      throw new SessionNotSavedError(session, describeFileError(saveFailure), { cause: saveFailure });
    }
    return session;
  } catch (error) {
    throw asSignInError(error);
  }
}

/**
 * The region, while the code is claimed: the claim's locked write then takes no time of its own. A code
 * claimed for a region call that failed is given back, as it was never sent.
 */
async function resolveRegionClaimingCode(client: AccountClient, email: string, code: string, context: SignInContext): Promise<RegionInfo> {
  const claiming = context.store.claimCode(code);
  let region: RegionInfo;
  try {
    region = await client.resolveRegion(email, { signal: context.signal });
  } catch (error) {
    if (await claiming.catch(() => false)) {
      await giveBack(code, context);
    }
    throw error;
  }
  const outcome = await claiming;
  if (outcome !== 'claimed') {
    throw codeNotFree(outcome);
  }
  return region;
}

/**
 * The login with a claimed code. A refusal from the service spends it here; a success is spent by the
 * caller, once the session is saved or could not be.
 */
async function loginSpendingCode(
  client: AccountClient,
  params: Parameters<AccountClient['loginWithCode']>[0],
  context: SignInContext,
): Promise<LoginResult> {
  try {
    return await client.loginWithCode(params, { signal: context.signal });
  } catch (error) {
    await (error instanceof CloudError && error.serviceAnswered ? spend(params.code, context) : giveBack(params.code, context));
    throw error;
  }
}

/**
 * The service has decided on the code (taken or refused it). Should recording it fail, the code stays
 * claimed and may be sent again once the claim expires; the service then refuses it as used.
 */
async function spend(code: string, { store, log }: SignInContext): Promise<void> {
  await store.spendCode(code).catch((error: unknown) => log.warn(`Could not record that the code was used: ${errorMessage(error)}`));
}

/** No decision on the code: it may be sent again. Should giving it back fail, its claim expires by itself. */
async function giveBack(code: string, { store, log }: SignInContext): Promise<void> {
  await store.releaseCode(code).catch((error: unknown) => log.warn(`Could not record that the code is still unused: ${errorMessage(error)}`));
}

/** Why a code that is not free is not sent: used up for good, or held by a sign-in under way. */
function codeNotFree(state: Exclude<CodeState, 'unused'>): Error {
  return state === 'spent' ? new SignInError(advice.codeSpent) : new CodeUnderWayError(advice.codeUnderWay);
}

/** A refusal only the user can fix becomes a SignInError saying what to do; anything else may be retried. */
function asSignInError(error: unknown): unknown {
  const needsUser = error instanceof CloudError && (error.kind === 'insecure' || error.serviceAnswered);
  return needsUser ? new SignInError(describeRefusedSignIn(error), { cause: error }) : error;
}

/** "Nickname (e-mail)", or the e-mail alone. */
export function describeAccount(session: Pick<StoredSession, 'email' | 'login'>): string {
  const nickname = session.login.nickname;
  return nickname !== undefined && nickname !== '' ? `${nickname} (${session.email})` : session.email;
}

/** Every string in the login result that grants access is masked from then on. */
export function rememberLoginSecrets(log: SecretMaskingLogger, login: LoginResult): void {
  log.addSecrets(login.token, ...stringsIn(login.rriot));
}

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
