import { CloudError } from '../cloud/errors.js';
import type { ConnectionProgress, SessionLoss } from '../connection/progress.js';
import { CONTROL_SUBTYPES, offUntilKey, type OffUntilKey } from '../values/controls.js';
import type { AccountStatus, DeliveryStatus, DoorbellStatus, DropCause, DroppedCounts, SessionState } from './delivery-status.js';

export interface BoardDoorbell {
  deviceId: string;
  name: string;
}

/** One account of a config with `accounts`: its label, whether it uses a doorbell access token, its doorbells. */
export interface BoardAccount {
  label: string;
  usesToken: boolean;
  deviceIds: readonly string[];
}

/** Where one account's session stands. */
interface SessionRecord {
  usesToken: boolean;
  session: SessionState;
  /** When the session in use was signed in, as stored; none while no session is in use, or with the configured token. */
  signedInAt: string | undefined;
  progress: ConnectionProgress;
}

interface DoorbellRecord {
  subscribed: boolean;
  /** Why the last subscription attempt failed; cleared when one succeeds. */
  failure?: string;
  lastMotionAt?: number;
  lastRingAt?: number;
  /** What the doorbell service last said of it: see DoorbellHealth. */
  battery?: number | null;
  online?: boolean | null;
  offlineSince?: number;
  /** When each switch off for a while turns itself on again. */
  offUntil?: Partial<Record<OffUntilKey, number>>;
}

/** Why a subscribed doorbell's alerts cannot arrive while the doorbell service cannot reach it. */
const OFFLINE_FAULT = 'offline in the doorbell service (check its Wi-Fi or power)';

/** Why no doorbell can be subscribed while the session stands so; none while it is usable or coming. */
const SESSION_FAULTS: Partial<Record<SessionState, string>> = {
  'signed-out': 'not signed in',
  expired: 'the session expired: sign in again',
  'token-refused': 'the doorbell access token was refused',
};

/**
 * What the plugin knows of its delivery, kept as things happen and read as a status when it is
 * written. Every change is cheap (a few fields) and tells `onChange`, which never writes at once.
 */
export class StatusBoard {
  private readonly startedAt: number;
  /** Each account's session, by label: the one account of a config without `accounts` under undefined. */
  private readonly sessions = new Map<string | undefined, SessionRecord>();
  /** The account each doorbell belongs to, with `accounts`. */
  private readonly accountOf = new Map<string, string>();
  private relay: { connected: boolean; since?: number } = { connected: false };
  private receiverListening = false;
  private deliveryDown = false;
  private readonly records: Map<string, DoorbellRecord>;
  private readonly droppedCounts: DroppedCounts = { invalid: 0, duplicate: 0, unconfigured: 0, stale: 0, flood: 0 };

  constructor(
    private readonly doorbells: readonly BoardDoorbell[],
    private readonly delivery: { pushMode: 'relay' | 'direct'; usesToken: boolean; accounts?: readonly BoardAccount[] },
    private readonly onChange: () => void,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
    this.records = new Map(doorbells.map(({ deviceId }) => [deviceId, { subscribed: false }]));
    const newSession = (usesToken: boolean): SessionRecord => ({ usesToken, session: 'signing-in', signedInAt: undefined, progress: {} });
    if (delivery.accounts === undefined) {
      this.sessions.set(undefined, newSession(delivery.usesToken));
    }
    for (const { label, usesToken, deviceIds } of delivery.accounts ?? []) {
      this.sessions.set(label, newSession(usesToken));
      deviceIds.forEach((deviceId) => this.accountOf.set(deviceId, label));
    }
  }

  /** A registration means the session (or the configured token) is in use. `account`: its label, with `accounts`. */
  connectionProgressed(progress: ConnectionProgress, account?: string): void {
    const record = this.sessionOf(account);
    record.progress = progress;
    if (progress.registeredAt !== undefined) {
      record.session = record.usesToken ? 'token' : 'signed-in';
    }
    this.onChange();
  }

  /**
   * The connection took up a session (or the configured token). Until it registers with it, the
   * plugin is connecting: no longer signed out, so no doorbell's fault says so.
   */
  sessionInUse(signedInAt: string | undefined, account?: string): void {
    const record = this.sessionOf(account);
    record.signedInAt = signedInAt;
    if (SESSION_FAULTS[record.session] !== undefined) {
      record.session = 'signing-in';
    }
    this.onChange();
  }

  /** The relay stream opened, as it does after every break. */
  relayConnected(): void {
    this.relay = { connected: true, since: this.now() };
    this.onChange();
  }

  receiverListens(): void {
    this.receiverListening = true;
    this.onChange();
  }

  /**
   * The relay stream has been down too long for alerts to arrive (true), or is back, or was closed on
   * purpose (false). A break shorter than that is no outage: what was published meanwhile arrives
   * when the stream reopens.
   */
  deliveryDownChanged(down: boolean): void {
    this.deliveryDown = down;
    if (down) {
      this.relay = { connected: false };
    }
    this.onChange();
  }

  subscribed(deviceId: string): void {
    this.update(deviceId, (record) => ({ ...record, subscribed: true, failure: undefined }));
  }

  subscriptionFailed(deviceId: string, error: unknown): void {
    this.update(deviceId, (record) => ({ ...record, subscribed: false, failure: describeFailure(error) }));
  }

  /**
   * No usable session: no doorbell is subscribed until the user signs in again, nothing is registered,
   * and the relay stream is closed.
   */
  sessionUnavailable(why: SessionLoss, account?: string): void {
    const record = this.sessionOf(account);
    record.session = why;
    record.signedInAt = undefined;
    record.progress = { ...record.progress, registeredAt: undefined };
    // The relay stream stays open while another account still has a session (or its token).
    if ([...this.sessions.values()].every(({ session }) => SESSION_FAULTS[session] !== undefined)) {
      this.relay = { connected: false };
    }
    this.doorbells
      .filter(({ deviceId }) => this.accountOf.get(deviceId) === account)
      .forEach(({ deviceId }) => this.records.set(deviceId, { ...this.records.get(deviceId), subscribed: false, failure: undefined }));
    this.onChange();
  }

  /** What the doorbell service says of the doorbell changed (or was kept from the last run). */
  doorbellHealth(deviceId: string, { battery, online, offlineSince }: { battery: number | null; online: boolean | null; offlineSince: number | undefined }): void {
    this.update(deviceId, (record) => ({ ...record, battery, online, offlineSince }));
  }

  motion(deviceId: string): void {
    this.update(deviceId, (record) => ({ ...record, lastMotionAt: this.now() }));
  }

  /** A switch of the doorbell turned, or its minutes off began or ended: when each turns itself on again. */
  switchesChanged(deviceId: string, offUntil: Partial<Record<OffUntilKey, number>>): void {
    this.update(deviceId, (record) => ({ ...record, offUntil }));
  }

  ring(deviceId: string): void {
    this.update(deviceId, (record) => ({ ...record, lastRingAt: this.now() }));
  }

  /**
   * A notification was not acted on. This is told on the way a push takes, which a flood makes busy:
   * only a number goes up, and the write it plans is the one timer every change shares (a flood of
   * drops plans it once, and it writes at most once a second), so the count shows within a second.
   */
  dropped(cause: DropCause): void {
    this.droppedCounts[cause] += 1;
    this.onChange();
  }

  /** The status as it stands now. */
  snapshot(): DeliveryStatus {
    const { pushMode, accounts } = this.delivery;
    // Without the top-level session fields when the accounts have them (see DeliveryStatus).
    return {
      pid: process.pid,
      startedAt: isoTime(this.startedAt) as string,
      updatedAt: isoTime(this.now()) as string,
      pushMode,
      ...(pushMode === 'relay' ? { relay: { connected: this.relay.connected, since: isoTime(this.relay.since) } } : { receiver: { listening: this.receiverListening } }),
      // With `accounts`, each account has its own session: the settings page reads them there.
      ...(accounts === undefined ? sessionStatus(this.sessionOf(undefined)) : { accounts: accounts.map(({ label }) => ({ label, ...sessionStatus(this.sessionOf(label)) })) }),
      doorbells: this.doorbells.map((doorbell) => this.doorbellStatus(doorbell)),
      dropped: { ...this.droppedCounts },
    } as DeliveryStatus;
  }

  /** An account's session record; an account the board was not told of (none with `accounts`) starts signing in. */
  private sessionOf(account: string | undefined): SessionRecord {
    let record = this.sessions.get(account);
    if (record === undefined) {
      record = { usesToken: false, session: 'signing-in', signedInAt: undefined, progress: {} };
      this.sessions.set(account, record);
    }
    return record;
  }

  private doorbellStatus({ deviceId, name }: BoardDoorbell): DoorbellStatus {
    const record = this.records.get(deviceId) ?? { subscribed: false };
    const label = this.accountOf.get(deviceId);
    return {
      deviceId,
      name,
      ...(label === undefined ? {} : { label }),
      subscribed: record.subscribed,
      fault: this.faultOf(deviceId, record),
      lastMotionAt: isoTime(record.lastMotionAt),
      lastRingAt: isoTime(record.lastRingAt),
      battery: record.battery ?? null,
      online: record.online ?? null,
      offlineSince: isoTime(record.offlineSince),
      ...Object.fromEntries(CONTROL_SUBTYPES.map((control) => [offUntilKey(control), isoTime(record.offUntil?.[offUntilKey(control)])])),
    };
  }

  /** The same conditions as the accessory's StatusFault in HomeKit, in words. */
  private faultOf(deviceId: string, record: DoorbellRecord): string | null {
    const sessionFault = SESSION_FAULTS[this.sessionOf(this.accountOf.get(deviceId)).session];
    if (!record.subscribed && sessionFault !== undefined) {
      return sessionFault;
    }
    if (record.offlineSince !== undefined) {
      return OFFLINE_FAULT;
    }
    if (!record.subscribed) {
      return record.failure ?? 'not subscribed yet';
    }
    return this.deliveryDown ? 'the push relay cannot be reached' : null;
  }

  /** Doorbells that are not configured are not on the board. */
  private update(deviceId: string, change: (record: DoorbellRecord) => DoorbellRecord): void {
    const record = this.records.get(deviceId);
    if (record !== undefined) {
      this.records.set(deviceId, change(record));
      this.onChange();
    }
  }
}

/** The session fields of status.json: at its top for the one account of a config without `accounts`, else per account. */
function sessionStatus({ session, signedInAt, progress }: SessionRecord): Omit<AccountStatus, 'label'> {
  return { registeredAt: isoTime(progress.registeredAt), nextRefreshAt: isoTime(progress.nextRunAt), session, signedInAt: signedInAt ?? null };
}

function isoTime(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

/** A failed subscription in a few plain words: the log has the whole story. */
function describeFailure(error: unknown): string {
  if (!(error instanceof CloudError)) {
    return 'the subscription failed';
  }
  switch (error.kind) {
    case 'network':
      return 'the doorbell service cannot be reached';
    case 'timeout':
      return 'the doorbell service did not answer in time';
    case 'insecure':
      return 'the doorbell service address is not https';
    case 'http':
      if (error.status === 404) {
        return 'the doorbell service does not know this device id';
      }
      return error.retryable ? 'the doorbell service is not available' : 'the doorbell service refused the subscription';
    default:
      return 'the doorbell service refused the subscription';
  }
}
