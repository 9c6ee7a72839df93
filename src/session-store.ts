import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { isJsonObject, PrivateFolder } from './json-file.js';
import type { JsonFile } from './json-file.js';
import type { LoginResult } from './cloud/account.js';
import type { Logger } from './log.js';

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

/** push.json */
interface PushSettings {
  receiverSecret: string;
}

const STORAGE_FOLDER = 'doorbell-motion';

/** Enough to remember every code a user plausibly pastes in, while the file stays small. */
const MAX_SPENT_CODE_HASHES = 50;
const RECEIVER_SECRET_BYTES = 32;
/** base64url of 32 bytes, unpadded */
const RECEIVER_SECRET = /^[A-Za-z0-9_-]{43}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const SESSION_TEXT_KEYS = ['accountServer', 'regionUrl', 'email', 'loggedInAt', 'codeHash'] as const;

export function hashCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

/** Everything the plugin keeps between restarts, in `<storagePath>/doorbell-motion/`. */
export class SessionStore {
  private readonly sessionFile: JsonFile<StoredSession>;
  private readonly installationFile: JsonFile<Installation>;
  private readonly pushFile: JsonFile<PushSettings>;

  constructor(storagePath: string, log: Logger) {
    const folder = new PrivateFolder(join(storagePath, STORAGE_FOLDER));
    this.sessionFile = folder.file('session.json', isStoredSession, log);
    this.installationFile = folder.file('installation.json', isInstallation, log);
    this.pushFile = folder.file('push.json', isPushSettings, log);
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

  saveSession(session: StoredSession): Promise<void> {
    return this.sessionFile.write(session);
  }

  /** Keeps the session on disk (for the record) but stops it being reused after a restart. */
  async markSessionInvalid(): Promise<void> {
    const invalidatedAt = new Date().toISOString();
    await this.sessionFile.update((session) =>
      session.invalidatedAt === undefined ? { ...session, invalidatedAt } : session,
    );
  }

  /** One-time codes: a code is spent once the service answered a login with it (success or service error). */
  async isCodeSpent(code: string): Promise<boolean> {
    const installation = await this.installationFile.read();
    return installation?.spentCodeHashes.includes(hashCode(code)) ?? false;
  }

  async markCodeSpent(code: string): Promise<void> {
    const hash = hashCode(code);
    await this.installationFile.readOrCreate(createInstallation);
    await this.installationFile.update((installation) =>
      installation.spentCodeHashes.includes(hash) ? installation : withSpentCodeHash(installation, hash),
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

  /** The push receiver secret: 32 random bytes, base64url, created once, stable across restarts. */
  async receiverSecret(): Promise<string> {
    const push = await this.pushFile.readOrCreate(() => ({
      receiverSecret: randomBytes(RECEIVER_SECRET_BYTES).toString('base64url'),
    }));
    return push.receiverSecret;
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
    value.spentCodeHashes.every(isSha256Hex)
  );
}

function isPushSettings(value: unknown): value is PushSettings {
  return isJsonObject(value) && typeof value.receiverSecret === 'string' && RECEIVER_SECRET.test(value.receiverSecret);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isSha256Hex(value: unknown): boolean {
  return typeof value === 'string' && SHA256_HEX.test(value);
}
