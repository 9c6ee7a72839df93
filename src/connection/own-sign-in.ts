import { hashCode, type StoredSession } from '../session/session-store.js';

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
