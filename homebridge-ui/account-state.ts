import type { StoredSession } from '#plugin/session/session-store.js';

/**
 * What the settings page shows of the session: never a token or any other secret of it. `token`: the
 * settings hold a doorbell access token, which the plugin uses instead of signing in.
 */
export interface AccountState {
  state: 'signed-out' | 'signed-in' | 'expired' | 'token';
  email?: string;
  nickname?: string;
  region?: string;
  /** ISO time of the sign-in. */
  signedInAt?: string;
}

/** Expired: the doorbell service refused the session, which is kept on disk only for the record. */
export function accountStateOf(session: StoredSession | undefined): AccountState {
  if (session === undefined) {
    return { state: 'signed-out' };
  }
  const { nickname, region } = session.login;
  return withoutEmpty({
    state: session.invalidatedAt === undefined ? 'signed-in' : 'expired',
    email: session.email,
    nickname,
    region,
    signedInAt: session.loggedInAt,
  });
}

function withoutEmpty(state: AccountState): AccountState {
  return Object.fromEntries(Object.entries(state).filter(([, value]) => value !== undefined && value !== '')) as unknown as AccountState;
}
