import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { LoginResult } from '../cloud/account.js';
import { isJsonObject, isNonEmptyString } from '../values/json.js';
import type { Logger } from '../log.js';
import { DATA_FILES } from './data-folder.js';
import { JsonFile } from './json-file.js';
import { codeStateIn, isCodeRecord, withClaim, withoutClaim, withSpent, type CodeRecord, type CodeState } from './one-time-codes.js';
import type { PrivateFolder } from './private-folder.js';

export interface StoredSession {
  /** account.serverUrl it was obtained from */
  accountServer: string;
  /** the regional address used for login */
  regionUrl: string;
  email: string;
  /** ISO time */
  loggedInAt: string;
  /** SHA-256 hex of the code that produced it */
  codeHash: string;
  login: LoginResult;
  /** set when the doorbell service said 401 / code 2010: not reused after a restart */
  invalidatedAt?: string;
}

/** installation.json: what identifies this installation, and where its one-time codes stand. */
interface Installation extends CodeRecord {
  installationId: string;
}

export interface SessionStoreOptions {
  /** The clock claims are stamped and judged by (ms since the epoch); tests set it. */
  now?: () => number;
}

/** How claiming a code went: this caller's now, or what stopped it. */
export type ClaimOutcome = 'claimed' | Exclude<CodeState, 'unused'>;

const SESSION_TEXT_KEYS = ['accountServer', 'regionUrl', 'email', 'loggedInAt', 'codeHash'] as const;

export function hashCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

/** The sign-in state: the session (session.json), and the installation's identity and one-time codes. */
export class SessionStore {
  private readonly sessionFile: JsonFile<StoredSession>;
  private readonly installationFile: JsonFile<Installation>;
  private readonly now: () => number;

  constructor(folder: PrivateFolder, log: Logger, options: SessionStoreOptions = {}) {
    this.sessionFile = new JsonFile(folder, DATA_FILES.session, isStoredSession, log);
    this.installationFile = new JsonFile(folder, DATA_FILES.installation, isInstallation, log);
    this.now = options.now ?? Date.now;
  }

  /** Whatever session is stored, invalidated or not. */
  readSession(): Promise<StoredSession | undefined> {
    return this.sessionFile.read();
  }

  /** A usable stored session for this e-mail and account server (not invalidated), else undefined. */
  async findSession(email: string, accountServer: string): Promise<StoredSession | undefined> {
    const session = await this.sessionFile.read();
    const usable =
      session !== undefined &&
      session.email === email &&
      session.accountServer === accountServer &&
      session.invalidatedAt === undefined;
    return usable ? session : undefined;
  }

  /** A new sign-in replaces whatever session.json holds, even a file that cannot be read. */
  saveSession(session: StoredSession): Promise<void> {
    return this.sessionFile.replace(session);
  }

  /** Keeps the session on disk (for the record) but stops it being reused after a restart. */
  /**
   * Only the session whose `token` the service refused: the settings page may have signed in anew
   * between the refusal and this write, and that session is good.
   */
  async markSessionInvalid(token: string): Promise<void> {
    const invalidatedAt = new Date(this.now()).toISOString();
    await this.sessionFile.update((session) =>
      session === undefined || session.invalidatedAt !== undefined || session.login.token !== token ? session : { ...session, invalidatedAt },
    );
  }

  /**
   * Signing out: the session is gone, whatever the file held or whether it could be read; the one-time
   * codes and the installation's identity stay.
   */
  removeSession(): Promise<void> {
    return this.sessionFile.remove();
  }

  /**
   * One-time codes: a code is spent once the service answered a login with it (success or service
   * error), and under way while a sign-in holds its claim.
   */
  async codeState(code: string): Promise<CodeState> {
    return codeStateIn(await this.installationFile.read(), hashCode(code), this.now());
  }

  async isCodeSpent(code: string): Promise<boolean> {
    return (await this.codeState(code)) === 'spent';
  }

  /**
   * Claims an unused code for a sign-in, in one step under the folder's lock, so the plugin and the
   * settings page never both send it. The claim ends with spendCode or releaseCode, or by itself once
   * it has outlived CLAIM_LIFETIME_MS (its process ended mid sign-in).
   */
  async claimCode(code: string): Promise<ClaimOutcome> {
    const hash = hashCode(code);
    let outcome: ClaimOutcome = 'claimed';
    await this.installationFile.update((current) => {
      const installation = current ?? createInstallation();
      const now = this.now();
      const state = codeStateIn(installation, hash, now);
      if (state !== 'unused') {
        outcome = state;
        return current;
      }
      return withClaim(installation, hash, now);
    });
    return outcome;
  }

  /** The service answered a login with the code: it is never sent again. */
  async spendCode(code: string): Promise<void> {
    const hash = hashCode(code);
    await this.installationFile.update((current) => withSpent(current ?? createInstallation(), hash, this.now()));
  }

  /** Gives a claimed code back: it was never sent, or the service made no decision on it, so it may be sent again. */
  async releaseCode(code: string): Promise<void> {
    const hash = hashCode(code);
    await this.installationFile.update((current) => current && withoutClaim(current, hash, this.now()));
  }

  /**
   * header_clientid: stable for this installation and account (e-mail). Derived rather than stored, so
   * it says nothing about the e-mail address and needs no bookkeeping per account.
   */
  async clientIdFor(email: string): Promise<string> {
    const { installationId } = await this.installationFile.readOrCreate(createInstallation);
    return createHmac('sha256', installationId).update(email, 'utf8').digest('base64url');
  }
}

function createInstallation(): Installation {
  return { installationId: randomUUID(), spentCodeHashes: [] };
}

function isStoredSession(value: unknown): value is StoredSession {
  return (
    isJsonObject(value) &&
    SESSION_TEXT_KEYS.every((key) => typeof value[key] === 'string') &&
    (value.invalidatedAt === undefined || typeof value.invalidatedAt === 'string') &&
    isJsonObject(value.login) &&
    isNonEmptyString(value.login.token)
  );
}

function isInstallation(value: unknown): value is Installation {
  return (
    isJsonObject(value) &&
    isNonEmptyString(value.installationId) &&
    isCodeRecord(value)
  );
}
