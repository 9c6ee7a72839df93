import type { DoorbellList } from '../cloud/doorbell.js';
import type { SubscriptionListener } from './subscriptions.js';

/** Why no session is usable: nobody is signed in, or the doorbell service refused the session or the configured token. */
export type SessionLoss = 'signed-out' | 'expired' | 'token-refused';

/** How far the connection has come, for the status the settings page shows. */
export interface ConnectionProgress {
  /** When the push registration last succeeded with the session in use (ms since the epoch). */
  registeredAt?: number;
  /** When registration and subscriptions run next: a retry, or the periodic refresh; none while waiting for the user. */
  nextRunAt?: number;
}

/**
 * Where an attempt to connect stopped: getting a session (the account service), opening the push
 * endpoint (the relay stream, or the receiver's port), or the push registration.
 */
export type ConnectStage = 'session' | 'push-endpoint' | 'registration';

export interface ProgressListener {
  /** Told whenever the connection plans its next attempt, which is after every attempt and every pause. */
  progressed?(progress: ConnectionProgress): void;
  /** An attempt stopped before the subscriptions, and will be tried again; `error` is why. */
  connectFailed?(stage: ConnectStage, error: unknown): void;
}

export interface ConnectionListener extends SubscriptionListener, ProgressListener {
  /** No usable session: every doorbell is in fault until the user signs in again. */
  sessionUnavailable(why: SessionLoss): void;
  /**
   * A session (or the configured token) is in use from now on, before anything was sent with it:
   * `signedInAt` is when that session was signed in, undefined for the configured token.
   */
  sessionInUse?(signedInAt: string | undefined): void;
  /**
   * A doorbell list read is over: the list it found, or undefined when it found none (it failed, or
   * the service does not offer the list). Never told for a read that was called off.
   */
  doorbellListRead?(list: DoorbellList | undefined): void;
}
