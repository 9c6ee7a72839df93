import type { RetryPolicy } from '#plugin/cloud/retry-policy.js';
import { ACCOUNT_FIELDS, parseSignInFields } from '#plugin/config/sign-in-fields.js';
import { parseConfig } from '#plugin/config/parse-config.js';
import { isJsonObject, isNonEmptyString } from '#plugin/values/json.js';
import { errorMessage, SecretMaskingLogger, type Logger } from '#plugin/log.js';
import { openAccountFolder, openDataFolder, type PrivateFolder } from '#plugin/storage/data-folder.js';
import { moveTopLevelSession } from '#plugin/session/session-store.js';
import { rm } from 'node:fs/promises';
import { PushSecretStore } from '#plugin/session/push-secrets.js';
import { SessionStore, type StoredSession } from '#plugin/session/session-store.js';
import { describeAccount, SessionNotSavedError, signInWithCode } from '#plugin/session/sign-in.js';
import { openStatusFile, writerIsRunning, type AccountStatus, type DeliveryStatus } from '#plugin/status/delivery-status.js';
import type { JsonFile } from '#plugin/storage/json-file.js';
import { listAccountDoorbells, type ListedDoorbell } from './account-doorbells.js';
import { accountEntryOf, keyOf, savedAccountOf, savedEntryOf, type AccountEntry } from './account-entry.js';
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
export type StatusAnswer = (Omit<DeliveryStatus, 'accounts'> & { running: boolean; pageSignIn?: PageSignIn; accounts?: Array<AccountStatus & { pageSignIn?: PageSignIn }> }) | { running: false };

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
  private readonly folder: PrivateFolder;
  private readonly store: SessionStore;
  private readonly pushSecrets: PushSecretStore;
  private readonly statusFile: JsonFile<DeliveryStatus>;
  /** Each account's own folder and store, by its key: one per process, so that its writes queue up. */
  private readonly accountStores = new Map<string, { folder: PrivateFolder; store: SessionStore }>();

  constructor(private readonly options: SettingsRequestsOptions) {
    this.log = new SecretMaskingLogger(options.log);
    this.folder = openDataFolder(options.storagePath, this.log);
    this.store = new SessionStore(this.folder, this.log);
    this.pushSecrets = new PushSecretStore(this.folder, this.log);
    this.statusFile = openStatusFile(this.folder, this.log);
  }

  /**
   * `/account`: `token` when the settings hold a doorbell access token, which the plugin then uses. With
   * `entry`, the state of that account of `accounts`, from the fields the page's form holds for it.
   */
  account(body?: unknown): Promise<AccountState> {
    return this.guard('Reading the account state', async () => {
      const entry = accountEntryOf(body);
      if (entry !== undefined) {
        return entry.doorbellAccessToken === undefined ? accountStateOf(await (await this.entryStore(entry))?.readSession()) : { state: 'token' };
      }
      const block = await this.options.readPlatformBlock();
      return configuredToken(block) === undefined ? accountStateOf(await this.store.readSession()) : { state: 'token' };
    });
  }

  /**
   * `/doorbells`: the account's doorbells, asked for with the doorbell access token when the settings
   * hold one, else with the session. A session the service refuses is recorded as expired, as the
   * plugin does. With `entry`, that account's, from the doorbell server the form holds for it,
   * marking the doorbells config.json holds for it.
   */
  doorbells(body?: unknown): Promise<DoorbellsAnswer> {
    return this.guard("Listing the account's doorbells", async () => {
      const block = await this.options.readPlatformBlock();
      const entry = accountEntryOf(body);
      if (entry === undefined) {
        return this.listDoorbells(isJsonObject(block) ? block : {}, configuredToken(block), this.store);
      }
      const saved = savedAccountOf(block, entry.key);
      const listed = { doorbellServerUrl: entry.doorbellServerUrl, doorbells: saved?.doorbells ?? [] };
      return this.listDoorbells(listed, entry.doorbellAccessToken, entry.doorbellAccessToken === undefined ? await this.entryStore(entry) : undefined);
    });
  }

  /** `block`: the doorbell server and the saved doorbells to mark; `token`: the configured access token, else the store's session. */
  private async listDoorbells(block: Record<string, unknown>, token: string | undefined, store: SessionStore | undefined): Promise<DoorbellsAnswer> {
    const session = token === undefined ? await store?.readSession() : undefined;
    const accessToken = token ?? (session?.invalidatedAt === undefined ? session?.login.token : undefined);
    if (accessToken === undefined) {
      throw new SettingsError(session === undefined ? "Sign in above to see the account's doorbells." : "The session has expired: sign in again above to see the account's doorbells.");
    }
    const listing = await listAccountDoorbells({ block, accessToken, configuredToken: token !== undefined, log: this.log, retry: this.retryPolicy });
    if (listing.available) {
      return listing;
    }
    const { refused, ...answer } = listing;
    if (refused === undefined) {
      return answer;
    }
    if (refused === 'access-token' || store === undefined) {
      return { ...answer, refused: true };
    }
    await store.markSessionInvalid(accessToken);
    this.log.warn('The doorbell service no longer accepts the session: sign in again on the settings page.');
    return { ...answer, refused: true, account: accountStateOf(await store.readSession()) };
  }

  /** `/status`: what the running plugin last wrote, whether it is still running, and whether it uses the page's sign-in. */
  status(): Promise<StatusAnswer> {
    return this.guard("Reading the plugin's status", async () => {
      const status = await this.statusFile.read();
      if (status === undefined) {
        return { running: false };
      }
      const running = writerIsRunning(status);
      if (status.accounts !== undefined) {
        return { ...status, running, accounts: running ? await this.accountsPageSignIn(status.accounts) : status.accounts };
      }
      const pageSignIn = running ? await this.pageSignInOf(status) : undefined;
      return { ...status, running, ...(pageSignIn === undefined ? {} : { pageSignIn }) };
    });
  }

  /** With `accounts`: each account's `pageSignIn`, as pageSignInOf has it for the one account, found by its label in config.json. */
  private async accountsPageSignIn(accounts: AccountStatus[]): Promise<Array<AccountStatus & { pageSignIn?: PageSignIn }>> {
    const config = parseConfig(await this.options.readPlatformBlock());
    const entries = config.status === 'ok' ? config.accounts : [];
    return Promise.all(
      accounts.map(async (account) => {
        const entry = entries.find(({ label }) => label === account.label);
        if (entry === undefined || entry.fault !== undefined || entry.doorbellAccessToken !== undefined || account.session === 'token') {
          return account;
        }
        const pageSignIn = followOf(await this.storeOfKey(entry.key)?.readSession(), account.signedInAt);
        return pageSignIn === undefined ? account : { ...account, pageSignIn };
      }),
    );
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
    const pageSignIn = followOf(await this.store.readSession(), status.signedInAt);
    // config.json only now, not on every poll of the page: most polls end above.
    if (pageSignIn === undefined || configuredToken(await this.options.readPlatformBlock()) !== undefined) {
      return undefined;
    }
    return pageSignIn;
  }

  /**
   * `/sign-in`: region and login with the code, under the spent-code rule; the code is never stored.
   * With `entry`, into the folder of the account the fields name, with the version numbers the form
   * holds for that entry.
   */
  signIn(fields: unknown): Promise<AccountState> {
    return this.guard('Signing in', async () => {
      const entry = accountEntryOf(fields);
      const block = entry === undefined ? await this.options.readPlatformBlock() : undefined;
      const configured = entry === undefined ? (isJsonObject(block) ? block.account : undefined) : entry.account;
      const parsed = parseSignInFields(isJsonObject(fields) ? fields : {}, configured);
      if (parsed.status === 'invalid') {
        throw new SettingsError(describeFieldProblems(parsed.problems));
      }
      const { code, ...account } = parsed.request;
      this.log.addSecrets(code);
      const store = entry === undefined ? this.store : await this.entryStore({ account, key: keyOf({ account }) });
      if (store === undefined) {
        throw new SettingsError(describeFieldProblems([]));
      }
      try {
        const session = await signInWithCode(account, code, { store, log: this.log, retry: this.retryPolicy });
        this.log.info(`${labelled(fields)}Signed in as ${describeAccount(session)} from the settings page`);
      } catch (error) {
        // Whether the page should clear the code field; an unreadable record leaves it as typed. A
        // session that could not be saved had its code answered, whether or not that could be recorded.
        const codeSpent = error instanceof SessionNotSavedError || (await store.isCodeSpent(code).catch(() => false));
        throw new SettingsError(describeSignInFailure(error, account.serverUrl), { codeSpent });
      }
      return accountStateOf(await store.readSession());
    });
  }

  /** `/sign-out`: the session is gone; the installation and its spent codes stay. With `entry`, that account's. */
  signOut(body?: unknown): Promise<AccountState> {
    return this.guard('Signing out', async () => {
      const entry = accountEntryOf(body);
      const store = entry === undefined ? this.store : await this.entryStore(entry);
      await store?.removeSession();
      this.log.info(`${labelled(body)}Signed out from the settings page`);
      return accountStateOf(await store?.readSession());
    });
  }

  /**
   * `/remove-account`: an entry of `accounts` the page takes out of the list is signed out and its
   * folder (session, installation and spent codes) removed, so nothing of it stays behind.
   */
  removeAccount(body: unknown): Promise<AccountState> {
    return this.guard('Removing the account', async () => {
      const entry = accountEntryOf(body);
      if (entry === undefined) {
        throw new SettingsError('Only an account of the list of accounts can be removed here.');
      }
      const store = await this.entryStore(entry);
      if (store !== undefined && entry.key !== undefined) {
        await store.removeSession();
        const { folder } = this.accountStores.get(entry.key) ?? {};
        this.accountStores.delete(entry.key);
        if (folder !== undefined) {
          await rm(folder.path, { recursive: true, force: true });
        }
      }
      this.log.info(`${labelled(body)}Signed out and removed from the settings page`);
      return { state: 'signed-out' };
    });
  }

  /**
   * `/saved-account`: the account fields config.json holds now, never the code. The page reads them back
   * after it asked the Homebridge UI to save them, as the UI does not say whether its save worked.
   * With `entry`, those of the saved entry that is the same account.
   */
  savedAccount(body?: unknown): Promise<SavedAccount> {
    return this.guard('Reading the saved account', async () => {
      const block = await this.options.readPlatformBlock();
      const entry = accountEntryOf(body);
      const holder = entry === undefined ? block : savedAccountOf(block, entry.key);
      const account = isJsonObject(holder) && isJsonObject(holder.account) ? holder.account : {};
      return Object.fromEntries(ACCOUNT_FIELDS.filter((field) => typeof account[field] === 'string').map((field) => [field, account[field]]));
    });
  }

  /** `/test-motion`: a motion notification for a configured doorbell, of whichever account, sent to the registered push token. */
  testMotion(request: unknown): Promise<TestMotionResult> {
    return this.guard('Sending a test motion', async () => {
      const { settings, doorbell, account } = testMotionTarget(request, await this.options.readPlatformBlock());
      const secrets = await this.pushSecrets.secrets();
      this.log.addSecrets(secrets.receiverSecret, secrets.relayTopic);
      const store = account.folder === '' ? this.store : this.storeOfKey(account.key);
      const delivery = await deliverTestMotion(settings.push, secrets, doorbell.deviceId, {
        signedIn: async () => account.doorbellAccessToken !== undefined || accountStateOf(await store?.readSession()).state === 'signed-in',
        timeoutMs: this.options.testMotionTimeoutMs ?? TEST_MOTION_TIMEOUT_MS,
      });
      this.log.info(`Test motion for ${doorbell.name} delivered (HTTP ${delivery.status})${delivery.warning === undefined ? '' : ' to the push receiver on this host only'}`);
      return { delivered: true, ...delivery };
    });
  }

  /**
   * The session store of an entry of `accounts`; undefined while its fields give no key. Once
   * config.json has the entry, the session of the one account at the top moves into its folder first
   * when it is the same account, as the plugin does at launch: whichever comes first moves it, and
   * nobody signs in again. Until then (the entry is only in the form), the running plugin still uses
   * that session where it is: it is read there, not moved.
   */
  private async entryStore(entry: Pick<AccountEntry, 'account' | 'key'> & Partial<AccountEntry>): Promise<SessionStore | undefined> {
    const store = this.storeOfKey(entry.key);
    const { folder } = (entry.key === undefined ? undefined : this.accountStores.get(entry.key)) ?? {};
    const { serverUrl, email } = entry.account;
    if (store === undefined || folder === undefined || entry.doorbellAccessToken !== undefined || serverUrl === undefined || email === undefined) {
      return store;
    }
    if (savedEntryOf(await this.options.readPlatformBlock(), entry.key) !== undefined) {
      await moveTopLevelSession(this.folder, folder, { account: { serverUrl, email } }, this.log);
      return store;
    }
    const top = await this.store.readSession();
    const topIsThisAccount = top !== undefined && keyOf({ account: { serverUrl: top.accountServer, email: top.email } }) === entry.key;
    return topIsThisAccount && (await store.readSession()) === undefined ? this.store : store;
  }

  private storeOfKey(key: string | undefined): SessionStore | undefined {
    if (key === undefined) {
      return undefined;
    }
    let opened = this.accountStores.get(key);
    if (opened === undefined) {
      const folder = openAccountFolder(this.options.storagePath, key, this.log);
      opened = { folder, store: new SessionStore(folder, this.log) };
      this.accountStores.set(key, opened);
    }
    return opened.store;
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

/** `[Cabin] ` before a log line about an entry of `accounts` with a label, as the plugin's lines name it. */
function labelled(body: unknown): string {
  const entry = isJsonObject(body) && isJsonObject(body.entry) ? body.entry : undefined;
  // A label not saved yet has not passed the schema: a control character must not break the log line.
  const label = typeof entry?.label === 'string' ? entry.label.replace(/\p{Cc}/gu, ' ').trim().slice(0, 32) : '';
  return label === '' ? '' : `[${label}] `;
}

/** The doorbell access token of the saved settings, if they hold one. */
function configuredToken(block: unknown): string | undefined {
  const token = isJsonObject(block) ? block.doorbellAccessToken : undefined;
  return isNonEmptyString(token) ? token : undefined;
}

/**
 * Whether a usable session in the account's session.json is one the running plugin has not taken up
 * (status.json names the sign-in it uses): `waiting` within FOLLOW_GRACE_MS of the sign-in, then
 * `not-followed`.
 */
function followOf(session: StoredSession | undefined, signedInAt: string | null): PageSignIn | undefined {
  if (session === undefined || session.invalidatedAt !== undefined || session.loggedInAt === signedInAt) {
    return undefined;
  }
  return Math.abs(Date.now() - Date.parse(session.loggedInAt)) < FOLLOW_GRACE_MS ? 'waiting' : 'not-followed';
}
