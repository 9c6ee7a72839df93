import { createHash, createHmac, randomUUID } from 'node:crypto';
import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoginResult } from '../cloud/account.js';
import { errorCode, type Logger } from '../log.js';
import { DATA_FILES, type PrivateFolder } from '../storage/data-folder.js';
import { JsonFile } from '../storage/json-file.js';
import { accountKey, type AccountIdentity } from '../values/address.js';
import { isJsonObject, isNonEmptyString } from '../values/json.js';

/** session.json and installation.json: the session, and the one-time codes spent or claimed. */

/**
 * The bookkeeping of one-time codes in installation.json, as plain values: which codes the service has
 * answered (spent: never sent again), and which a sign-in is sending right now (claimed). The store
 * applies these under the data folder's lock; codes are known only by their SHA-256.
 */

/**
 * How long a claim holds without the service's decision. A sign-in gives up well before: each of its
 * two calls makes at most five attempts of at most 10 s, with at most a minute between them. So a
 * claim this old belongs to a process that ended mid sign-in (the settings page closed, Homebridge
 * restarted), and its code may be sent again.
 */
export const CLAIM_LIFETIME_MS = 15 * 60_000;

/** Enough to remember every code a user plausibly pastes in, while the file stays small. */
const MAX_CODE_HASHES = 50;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Where a code stands: free to send, being sent by a sign-in under way, or answered by the service. */
export type CodeState = 'unused' | 'under-way' | 'spent';

/** A sign-in with the code is under way since `claimedAt` (ISO time). */
export interface CodeClaim {
  hash: string;
  claimedAt: string;
}

export interface CodeRecord {
  /** Answered by the service. Files of earlier versions also hold their claims here: those stay spent. */
  spentCodeHashes: string[];
  /** Absent in files of earlier versions. */
  claimedCodes?: CodeClaim[];
}

/** The code's state at `now` (ms since the epoch); a claim that has outlived its lifetime is no claim. */
export function codeStateIn(record: CodeRecord | undefined, hash: string, now: number): CodeState {
  if (record === undefined) {
    return 'unused';
  }
  if (record.spentCodeHashes.includes(hash)) {
    return 'spent';
  }
  return liveClaims(record, now).some((claim) => claim.hash === hash) ? 'under-way' : 'unused';
}

/** The record with the code claimed at `now`; the caller checked it is unused. */
export function withClaim<T extends CodeRecord>(record: T, hash: string, now: number): T {
  const claim = { hash, claimedAt: new Date(now).toISOString() };
  return { ...record, claimedCodes: [...otherLiveClaims(record, hash, now), claim].slice(-MAX_CODE_HASHES) };
}

/** The record with the code spent (and no longer claimed). */
export function withSpent<T extends CodeRecord>(record: T, hash: string, now: number): T {
  const spent = record.spentCodeHashes.includes(hash) ? record.spentCodeHashes : [...record.spentCodeHashes, hash];
  return { ...record, spentCodeHashes: spent.slice(-MAX_CODE_HASHES), claimedCodes: otherLiveClaims(record, hash, now) };
}

/** The record without the code's claim; unchanged (the same object) when it holds none. */
export function withoutClaim<T extends CodeRecord>(record: T, hash: string, now: number): T {
  if (!(record.claimedCodes ?? []).some((claim) => claim.hash === hash)) {
    return record;
  }
  return { ...record, claimedCodes: otherLiveClaims(record, hash, now) };
}

/** The shape check of the two fields, for the file's guard. */
export function isCodeRecord(value: Record<string, unknown>): boolean {
  const claims = value.claimedCodes;
  return (
    Array.isArray(value.spentCodeHashes) &&
    value.spentCodeHashes.every(isCodeHash) &&
    (claims === undefined || (Array.isArray(claims) && claims.every(isCodeClaim)))
  );
}

/**
 * Claims still holding at `now`. Measured both ways: a claim stamped in the future (the host clock was
 * set back) holds no longer than its lifetime either, so no clock step leaves a code claimed for good.
 */
function liveClaims(record: CodeRecord, now: number): CodeClaim[] {
  return (record.claimedCodes ?? []).filter((claim) => Math.abs(now - Date.parse(claim.claimedAt)) < CLAIM_LIFETIME_MS);
}

/** Each write keeps only the claims still holding, so expired ones leave the file. */
function otherLiveClaims(record: CodeRecord, hash: string, now: number): CodeClaim[] {
  return liveClaims(record, now).filter((claim) => claim.hash !== hash);
}

function isCodeHash(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

function isCodeClaim(value: unknown): value is CodeClaim {
  return isJsonObject(value) && isCodeHash(value.hash) && typeof value.claimedAt === 'string' && Number.isFinite(Date.parse(value.claimedAt));
}

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
export interface Installation extends CodeRecord {
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

export function isStoredSession(value: unknown): value is StoredSession {
  return (
    isJsonObject(value) &&
    SESSION_TEXT_KEYS.every((key) => typeof value[key] === 'string') &&
    (value.invalidatedAt === undefined || typeof value.invalidatedAt === 'string') &&
    isJsonObject(value.login) &&
    isNonEmptyString(value.login.token)
  );
}

export function isInstallation(value: unknown): value is Installation {
  return (
    isJsonObject(value) &&
    isNonEmptyString(value.installationId) &&
    isCodeRecord(value)
  );
}

/**
 * A config that gains `accounts` keeps the session it had: the session.json and installation.json of
 * the data folder (where a config without `accounts` keeps them) move into the folder of the entry
 * that is the same account (same account server and e-mail), so nobody signs in again. The plugin at
 * launch and the settings page's server both call this; the first one to take the data folder's lock
 * moves the files, and the other finds nothing left to move.
 *
 * Never for an entry with a doorbell access token (it has no session), never over a session the
 * account's folder already holds (a newer sign-in), and only for the entry's own account.
 *
 * Resolves whether the files moved. A failure (the folder cannot be written) is thrown: nothing is
 * lost, the files stay where they were, and the next launch tries again.
 */
export async function moveTopLevelSession(root: PrivateFolder, target: PrivateFolder, account: AccountIdentity, log: Logger): Promise<boolean> {
  if (account.doorbellAccessToken !== undefined || account.account === undefined || root.path === target.path) {
    return false;
  }
  const key = accountKey(account);
  if (key === undefined) {
    return false;
  }
  const topSession = new JsonFile(root, DATA_FILES.session, isStoredSession, log);
  const isThisAccounts = (session: StoredSession | undefined) => session !== undefined && accountKey({ account: { serverUrl: session.accountServer, email: session.email } }) === key;
  // Most starts have nothing to move: a look without the lock first, so that the accounts do not wait
  // for one another's turn at the data folder's one lock before their first request.
  if (!isThisAccounts(await topSession.read())) {
    return false;
  }
  return root.whileLocked(async () => {
    if (!isThisAccounts(await topSession.read())) {
      return false;
    }
    const topInstallation = new JsonFile(root, DATA_FILES.installation, isInstallation, log);
    const installation = await topInstallation.read();
    // The account folder's own writers hold its lock: the move waits for them and they for it.
    const moved = await target.whileLocked(async () => {
      if (await exists(join(target.path, DATA_FILES.session))) {
        return false;
      }
      // The installation first: a session without the codes it spent could send a spent code again.
      if (installation !== undefined && !(await exists(join(target.path, DATA_FILES.installation)))) {
        await rename(topInstallation.path, join(target.path, DATA_FILES.installation));
      }
      await rename(topSession.path, join(target.path, DATA_FILES.session));
      return true;
    });
    if (moved && installation !== undefined && (await exists(topInstallation.path))) {
      // The account's folder had an installation of its own (an attempt to sign in there): it keeps
      // its identity and learns the codes spent here, which must never be sent again either.
      const now = Date.now();
      await new JsonFile(target, DATA_FILES.installation, isInstallation, log).update(
        (current) => current && installation.spentCodeHashes.reduce((record, hash) => withSpent(record, hash, now), current),
      );
    }
    if (moved) {
      log.info(`Moved the session into the account's own folder (${target.path}): no new sign-in is needed.`);
    }
    return moved;
  });
}

/** Whether a file is there; a look that fails for another reason than a missing file is thrown, so nothing is overwritten on a guess. */
async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      return false;
    }
    throw error;
  }
}
