import type { RetryPolicy } from '#plugin/cloud/retry-policy.js';
import { ACCOUNT_FIELDS, parseSignInFields } from '#plugin/config/sign-in-fields.js';
import { isJsonObject, isNonEmptyString } from '#plugin/values/json.js';
import { errorMessage, SecretMaskingLogger, type Logger } from '#plugin/log.js';
import { openDataFolder } from '#plugin/storage/data-folder.js';
import { PushSecretStore } from '#plugin/session/push-secrets.js';
import { SessionStore } from '#plugin/session/session-store.js';
import { describeAccount, SessionNotSavedError, signInWithCode } from '#plugin/session/sign-in.js';
import { openStatusFile, writerIsRunning, type DeliveryStatus } from '#plugin/status/delivery-status.js';
import type { JsonFile } from '#plugin/storage/json-file.js';
import { listAccountDoorbells, type ListedDoorbell } from './account-doorbells.js';
import { accountStateOf, type AccountState } from './account-state.js';
import { describeFieldProblems, describeSignInFailure } from './sign-in-failure.js';
import { SettingsError } from './settings-error.js';
import { deliverTestMotion, TEST_MOTION_TIMEOUT_MS, testMotionTarget, type TestMotionResult } from './test-motion.js';

/**
 * What the settings page asks its server for, without the Homebridge UI around it: the account state,
 * signing in and out, the account's doorbells, the running plugin's status, and a test motion. Every
 * failure is a SettingsError in words the user can act on.
 */

export interface SettingsRequestsOptions {
  /** Homebridge's storage path: the data folder the plugin uses lies inside it. */
  storagePath: string;
  /** The plugin's platform block as config.json holds it now; undefined when there is none. */
  readPlatformBlock: () => Promise<unknown>;
  log: Logger;
  /** Tests shorten the retry delays. */
  retry?: Partial<RetryPolicy>;
  testMotionTimeoutMs?: number;
}

/** The account fields a sign-in on the page stores in config.json, as config.json holds them now. */
export type SavedAccount = Partial<Record<(typeof ACCOUNT_FIELDS)[number], string>>;

/**
 * `/doorbells`: the listing, or why there is none. `refused`: the service turned down the token it was
 * asked with, a problem to fix, where a service without the list is not; `account`: the state a
 * refused session turned into.
 */
export type DoorbellsAnswer =
  | { available: true; doorbells: ListedDoorbell[] }
  | { available: false; reason: string; refused?: true; account?: AccountState };

/**
 * A sign-in made on the page that the running plugin has not taken up: `waiting` for it to, as it
 * does within seconds; `not-followed` once it has had far longer than that (it was set up for
 * another account, and its log says to restart Homebridge).
 */
export type PageSignIn = 'waiting' | 'not-followed';

/**
 * `/status`: status.json as the plugin wrote it, and whether that plugin still runs; only `running`
 * without one. `pageSignIn` when the page's session is not the one the running plugin uses.
 */
export type StatusAnswer = (DeliveryStatus & { running: boolean; pageSignIn?: PageSignIn }) | { running: false };

/**
 * How long after a sign-in on the page the plugin is waited for: it notices session.json within
 * seconds and writes its status within one more; this leaves room for a slow disk or a busy host.
 */
export const FOLLOW_GRACE_MS = 30_000;

/**
 * Someone is waiting at the page, so a sign-in asks twice more at most and soon; the page can always
 * be asked again. The plugin, working in the background, is more patient.
 */
const WAITING_USER_RETRY: Partial<RetryPolicy> = {
  retries: 2,
  // Steps of 1 and 2 s, of which the jitter waits the upper half: 0.5 to 1 s, then 1 to 2 s.
  backoff: { firstMs: 1_000, factor: 2, maxMs: 2_000, jitter: true },
  maxRetryAfterMs: 5_000,
};

export class SettingsRequests {
  private readonly log: SecretMaskingLogger;
  private readonly store: SessionStore;
  private readonly pushSecrets: PushSecretStore;
  private readonly statusFile: JsonFile<DeliveryStatus>;

  constructor(private readonly options: SettingsRequestsOptions) {
    this.log = new SecretMaskingLogger(options.log);
    const folder = openDataFolder(options.storagePath, this.log);
    this.store = new SessionStore(folder, this.log);
    this.pushSecrets = new PushSecretStore(folder, this.log);
    this.statusFile = openStatusFile(folder, this.log);
  }

  /** `/account`: `token` when the saved settings hold a doorbell access token, which the plugin then uses. */
  account(): Promise<AccountState> {
    return this.guard('Reading the account state', async () => {
      const block = await this.options.readPlatformBlock();
      return configuredToken(block) === undefined ? accountStateOf(await this.store.readSession()) : { state: 'token' };
    });
  }

  /**
   * `/doorbells`: the account's doorbells, asked for with the doorbell access token when the settings
   * hold one, else with the session. A session the service refuses is recorded as expired, as the plugin does.
   */
  doorbells(): Promise<DoorbellsAnswer> {
    return this.guard("Listing the account's doorbells", async () => {
      const block = await this.options.readPlatformBlock();
      const token = configuredToken(block);
      const session = token === undefined ? await this.store.readSession() : undefined;
      const accessToken = token ?? (session?.invalidatedAt === undefined ? session?.login.token : undefined);
      if (accessToken === undefined) {
        throw new SettingsError(session === undefined ? "Sign in above to see the account's doorbells." : "The session has expired: sign in again above to see the account's doorbells.");
      }
      const listing = await listAccountDoorbells({
        block: isJsonObject(block) ? block : {},
        accessToken,
        configuredToken: token !== undefined,
        log: this.log,
        retry: this.retryPolicy,
      });
      if (listing.available) {
        return listing;
      }
      const { refused, ...answer } = listing;
      if (refused === undefined) {
        return answer;
      }
      if (refused === 'access-token') {
        return { ...answer, refused: true };
      }
      await this.store.markSessionInvalid(accessToken);
      this.log.warn('The doorbell service no longer accepts the session: sign in again on the settings page.');
      return { ...answer, refused: true, account: accountStateOf(await this.store.readSession()) };
    });
  }

  /** `/status`: what the running plugin last wrote, whether it is still running, and whether it uses the page's sign-in. */
  status(): Promise<StatusAnswer> {
    return this.guard("Reading the plugin's status", async () => {
      const status = await this.statusFile.read();
      if (status === undefined) {
        return { running: false };
      }
      const running = writerIsRunning(status);
      const pageSignIn = running ? await this.pageSignInOf(status) : undefined;
      return { ...status, running, ...(pageSignIn === undefined ? {} : { pageSignIn }) };
    });
  }

  /**
   * Whether the page holds a sign-in the running plugin has not taken up: a usable session in
   * session.json other than the one status.json names. A status without `signedInAt` (an older
   * plugin) or a set-up with a doorbell access token has nothing to compare.
   */
  private async pageSignInOf(status: DeliveryStatus): Promise<PageSignIn | undefined> {
    if (status.signedInAt === undefined || status.session === 'token') {
      return undefined;
    }
    const session = await this.store.readSession();
    if (session === undefined || session.invalidatedAt !== undefined || session.loggedInAt === status.signedInAt) {
      return undefined;
    }
    // config.json only now, not on every poll of the page: most polls end above.
    if (configuredToken(await this.options.readPlatformBlock()) !== undefined) {
      return undefined;
    }
    return Math.abs(Date.now() - Date.parse(session.loggedInAt)) < FOLLOW_GRACE_MS ? 'waiting' : 'not-followed';
  }

  /** `/sign-in`: region and login with the code, under the spent-code rule; the code is never stored. */
  signIn(fields: unknown): Promise<AccountState> {
    return this.guard('Signing in', async () => {
      const block = await this.options.readPlatformBlock();
      const parsed = parseSignInFields(isJsonObject(fields) ? fields : {}, isJsonObject(block) ? block.account : undefined);
      if (parsed.status === 'invalid') {
        throw new SettingsError(describeFieldProblems(parsed.problems));
      }
      const { code, ...account } = parsed.request;
      this.log.addSecrets(code);
      try {
        const session = await signInWithCode(account, code, { store: this.store, log: this.log, retry: this.retryPolicy });
        this.log.info(`Signed in as ${describeAccount(session)} from the settings page`);
      } catch (error) {
        // Whether the page should clear the code field; an unreadable record leaves it as typed. A
        // session that could not be saved had its code answered, whether or not that could be recorded.
        const codeSpent = error instanceof SessionNotSavedError || (await this.store.isCodeSpent(code).catch(() => false));
        throw new SettingsError(describeSignInFailure(error, account.serverUrl), { codeSpent });
      }
      return accountStateOf(await this.store.readSession());
    });
  }

  /** `/sign-out`: the session is gone; the installation and its spent codes stay. */
  signOut(): Promise<AccountState> {
    return this.guard('Signing out', async () => {
      await this.store.removeSession();
      this.log.info('Signed out from the settings page');
      return accountStateOf(await this.store.readSession());
    });
  }

  /**
   * `/saved-account`: the account fields config.json holds now, never the code. The page reads them back
   * after it asked the Homebridge UI to save them, as the UI does not say whether its save worked.
   */
  savedAccount(): Promise<SavedAccount> {
    return this.guard('Reading the saved account', async () => {
      const block = await this.options.readPlatformBlock();
      const account = isJsonObject(block) && isJsonObject(block.account) ? block.account : {};
      return Object.fromEntries(ACCOUNT_FIELDS.filter((field) => typeof account[field] === 'string').map((field) => [field, account[field]]));
    });
  }

  /** `/test-motion`: a motion notification for a configured doorbell, sent to the registered push token. */
  testMotion(request: unknown): Promise<TestMotionResult> {
    return this.guard('Sending a test motion', async () => {
      const { settings, doorbell } = testMotionTarget(request, await this.options.readPlatformBlock());
      const secrets = await this.pushSecrets.secrets();
      this.log.addSecrets(secrets.receiverSecret, secrets.relayTopic);
      const delivery = await deliverTestMotion(settings.push, secrets, doorbell.deviceId, {
        signedIn: async () => settings.doorbellAccessToken !== undefined || accountStateOf(await this.store.readSession()).state === 'signed-in',
        timeoutMs: this.options.testMotionTimeoutMs ?? TEST_MOTION_TIMEOUT_MS,
      });
      this.log.info(`Test motion for ${doorbell.name} delivered (HTTP ${delivery.status})${delivery.warning === undefined ? '' : ' to the push receiver on this host only'}`);
      return { delivered: true, ...delivery };
    });
  }

  private get retryPolicy(): Partial<RetryPolicy> {
    return { ...WAITING_USER_RETRY, ...this.options.retry };
  }

  /**
   * Runs one request. What fails leaves as a SettingsError whose message has passed the secret mask,
   * whatever threw it; the log gets the same line.
   */
  private async guard<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const known = error instanceof SettingsError ? error : undefined;
      const message = this.log.mask(known?.message ?? `${what} failed: ${errorMessage(error)}`);
      this.log.warn(message);
      throw new SettingsError(message, known?.details);
    }
  }
}

/** The doorbell access token of the saved settings, if they hold one. */
function configuredToken(block: unknown): string | undefined {
  const token = isJsonObject(block) ? block.doorbellAccessToken : undefined;
  return isNonEmptyString(token) ? token : undefined;
}
