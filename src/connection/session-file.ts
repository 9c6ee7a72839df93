import { errorMessage, type Logger } from '../log.js';
import type { SessionStore, StoredSession } from '../session/session-store.js';

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
