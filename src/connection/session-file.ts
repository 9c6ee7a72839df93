import { errorMessage, type Logger } from '../log.js';
import { hashCode, type SessionStore, type StoredSession } from '../session/session-store.js';

/**
 * session.json as the connection sees it: what a change means, and its own sign-in, which must not be
 * taken for one made on the settings page.
 */

/**
 * session.json as the connection reads and writes it. The settings page signs in and out by writing
 * the file; the plugin writes it too (its own sign-in, a refusal on record), and those writes are no news.
 */

/** What the file, as it now reads, says about the session in use. */
export type SessionFileNews = { kind: 'none' } | { kind: 'signed-out' } | { kind: 'signed-in' } | { kind: 'other-account'; email: string };

export interface SessionInUse {
  /** The token in use; undefined without one. */
  token: string | undefined;
  /** The session in use was never written (a full disk): no file is no sign-out for it. */
  unsaved: boolean;
  /** The last token the service refused: the file holds it until the refusal is on record there. */
  refused: string | undefined;
}

/**
 * No file while a saved session is in use is a sign-out; another session of the configured account, a
 * sign-in; one of another account, a sign-in this Homebridge cannot take without a restart.
 */
export function sessionFileNews(session: StoredSession | undefined, account: { email: string; serverUrl: string }, inUse: SessionInUse): SessionFileNews {
  if (session === undefined) {
    return { kind: inUse.token !== undefined && !inUse.unsaved ? 'signed-out' : 'none' };
  }
  const { token } = session.login;
  if (session.invalidatedAt !== undefined || token === inUse.token || token === inUse.refused) {
    return { kind: 'none' };
  }
  if (session.email !== account.email || session.accountServer !== account.serverUrl) {
    return { kind: 'other-account', email: session.email };
  }
  return { kind: 'signed-in' };
}

/** Puts a refused session on record, so that it is not used again after a restart; a failure to write is only told. */
export async function recordRefusal(store: SessionStore, token: string | undefined, log: Logger): Promise<void> {
  try {
    if (token !== undefined) {
      await store.markSessionInvalid(token);
    }
  } catch (storeError) {
    log.warn(`Could not record the invalid session: ${errorMessage(storeError)}`);
  }
}

/**
 * The connection's own sign-in with account.code, as session.json's watcher may see it: the sign-in
 * saves its session, then records the code as used, and only then hands its token over. A poll in
 * between finds a session the connection has no token of yet; taken for a sign-in on the settings page,
 * it would end the sign-in's attempt to connect for nothing and start another. So while a sign-in is under way, a
 * session from the configured code is held back, and judged once the sign-in's token is known.
 */
export class OwnSignIn {
  private underWay = false;
  private held: StoredSession | undefined;
  private readonly codeHash: string | undefined;

  constructor(code: string | undefined) {
    this.codeHash = code === undefined ? undefined : hashCode(code);
  }

  /** Whether the file's latest session waits for the sign-in under way; any later report replaces it. */
  holdsBack(session: StoredSession | undefined): boolean {
    const ours = this.underWay && this.codeHash !== undefined && session?.codeHash === this.codeHash;
    this.held = ours ? session : undefined;
    return ours;
  }

  /**
   * Gets the token with `obtain`; then hands a session held back meanwhile to `follow`, unless it is
   * the one obtained: it may have been the page's (the same code typed there, or a stored session read
   * just before it came), and a sign-in that failed obtained none.
   */
  async obtain<T extends { token: string }>(obtain: () => Promise<T>, follow: (session: StoredSession) => void): Promise<T> {
    let obtained: T | undefined;
    this.underWay = true;
    try {
      obtained = await obtain();
      return obtained;
    } finally {
      this.underWay = false;
      const { held } = this;
      this.held = undefined;
      if (held !== undefined && held.login.token !== obtained?.token) {
        follow(held);
      }
    }
  }
}
