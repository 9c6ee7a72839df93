import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { LoginResult } from '../cloud/account.js';
import { isJsonObject, isNonEmptyString } from '../values/json.js';
import type { Logger } from '../log.js';
import { DATA_FILES } from './data-folder.js';
import { JsonFile } from './json-file.js';
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

/** installation.json: what identifies this installation, and the codes it must never send again. */
interface Installation {
  installationId: string;
  spentCodeHashes: string[];
}

/** Enough to remember every code a user plausibly pastes in, while the file stays small. */
const MAX_SPENT_CODE_HASHES = 50;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const SESSION_TEXT_KEYS = ['accountServer', 'regionUrl', 'email', 'loggedInAt', 'codeHash'] as const;

export function hashCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

/** The sign-in state: the session (session.json), and the installation's identity and spent codes. */
export class SessionStore {
  private readonly sessionFile: JsonFile<StoredSession>;
  private readonly installationFile: JsonFile<Installation>;

  constructor(folder: PrivateFolder, log: Logger) {
    this.sessionFile = new JsonFile(folder, DATA_FILES.session, isStoredSession, log);
    this.installationFile = new JsonFile(folder, DATA_FILES.installation, isInstallation, log);
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

  async saveSession(session: StoredSession): Promise<void> {
    await this.sessionFile.update(() => session);
  }

  /** Keeps the session on disk (for the record) but stops it being reused after a restart. */
  async markSessionInvalid(): Promise<void> {
    const invalidatedAt = new Date().toISOString();
    await this.sessionFile.update((session) =>
      session === undefined || session.invalidatedAt !== undefined ? session : { ...session, invalidatedAt },
    );
  }

  /** Signing out: the session is gone; spent codes and the installation's identity stay. */
  async removeSession(): Promise<void> {
    await this.sessionFile.update(() => undefined);
  }

  /** One-time codes: a code is spent once the service answered a login with it (success or service error). */
  async isCodeSpent(code: string): Promise<boolean> {
    const installation = await this.installationFile.read();
    return installation?.spentCodeHashes.includes(hashCode(code)) ?? false;
  }

  /**
   * Marks the code spent unless it already is, in one step under the folder's lock; resolves whether
   * this caller got it. Claimed before the login is sent, so the plugin and the settings page can never
   * both send the same code.
   */
  async claimCode(code: string): Promise<boolean> {
    const hash = hashCode(code);
    let claimed = false;
    await this.installationFile.update((current) => {
      const installation = current ?? createInstallation();
      if (installation.spentCodeHashes.includes(hash)) {
        return installation;
      }
      claimed = true;
      return withSpentCodeHash(installation, hash);
    });
    return claimed;
  }

  /** Gives a claimed code back: it was never sent, or the service gave no verdict on it, so it may be sent again. */
  async releaseCode(code: string): Promise<void> {
    const hash = hashCode(code);
    await this.installationFile.update((current) =>
      current === undefined || !current.spentCodeHashes.includes(hash)
        ? current
        : { ...current, spentCodeHashes: current.spentCodeHashes.filter((spent) => spent !== hash) },
    );
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

function withSpentCodeHash(installation: Installation, hash: string): Installation {
  const spentCodeHashes = [...installation.spentCodeHashes, hash].slice(-MAX_SPENT_CODE_HASHES);
  return { ...installation, spentCodeHashes };
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
    Array.isArray(value.spentCodeHashes) &&
    value.spentCodeHashes.every((hash) => typeof hash === 'string' && SHA256_HEX.test(hash))
  );
}
