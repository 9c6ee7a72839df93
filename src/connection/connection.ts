import { DoorbellClient, type DoorbellList } from '../cloud/doorbell.js';
import { CloudError } from '../cloud/errors.js';
import type { RetryPolicy } from '../cloud/retry-policy.js';
import { errorMessage, type Logger, type SecretMaskingLogger } from '../log.js';
import { advice } from '../session/advice.js';
import type { SessionStore, StoredSession } from '../session/session-store.js';
import { type Credentials, obtainAccessToken, SignInError } from '../session/sign-in.js';
import { describeDuration } from '../values/time.js';
import type { ConnectionListener, ConnectStage, SessionLoss } from './progress.js';
import { RequestSlots } from './request-slots.js';
import { type RunReason, Schedule, type ScheduleTiming } from './schedule.js';
import { OwnSignIn, recordRefusal, sessionFileNews, type SessionInUse } from './session-file.js';
import { type SubscribedDoorbell, SUBSCRIPTION_CONCURRENCY, Subscriptions } from './subscriptions.js';

/**
 * The background work: the push endpoint it waits for, registration, subscriptions, and the doorbell
 * list read.
 */

/** Where notifications arrive; opened before the push registration names it. */
export interface PushEndpoint {
  /** Starts receiving, once; resolves with the push token to register, a secret. */
  open(): Promise<string>;
  /** The session is gone: stops holding anything for it until the next open(). Never rejects. */
  suspend(): Promise<void>;
  /** Where notifications arrive, for the log: never the secret part. */
  readonly description: string;
}

/** The push endpoint did not open: the attempt to connect may be made again as soon as it does. */
export class EndpointNotOpen extends Error {
  constructor(cause: unknown) {
    super(errorMessage(cause), { cause });
    this.name = 'EndpointNotOpen';
  }
}

/**
 * The account's doorbell list, read between the passes: one GET for the whole account, never one per
 * doorbell. It is the cheapest call that tells whether the service still accepts the session, so an
 * expired session is noticed within minutes rather than at the next refresh, hours away. A failure
 * other than a refused session is only tried again at the next read: the list never faults a
 * doorbell by itself.
 */
export class DoorbellListRead {
  /** False once the service answered that it does not offer the list: it is not asked again this run. */
  private offered = true;
  /** The list as the last read found it; undefined before the first answer. */
  latest: DoorbellList | undefined;
  /** Some read of this run is over (answered, failed, or not offered). */
  settled = false;
  /** A read still under way when the next falls due is not doubled. */
  private reading = false;

  constructor(
    private readonly slots: RequestSlots,
    private readonly log: Logger,
    /** The service no longer accepts the session (or the configured token). */
    private readonly sessionRefused: () => void,
    /** The service does not offer the list: no read is due for the rest of the run. */
    private readonly notOffered: () => void,
    /** A read is over: the list it found, or undefined when it found none. */
    private readonly onRead: (list: DoorbellList | undefined) => void = () => undefined,
  ) {}

  /**
   * Reads the list once with the session in use, if there is one; what the answer means is told to the
   * callbacks. A read called off (`signal`) means nothing.
   */
  async read(client: DoorbellClient | undefined, signal: AbortSignal): Promise<void> {
    if (client === undefined || !this.offered || this.reading) {
      return;
    }
    this.reading = true;
    let found: DoorbellList | undefined;
    try {
      const answer = await this.slots.run(() => client.listDoorbells({ signal }), signal);
      if (answer.offered) {
        this.latest = { doorbells: answer.doorbells, skipped: answer.skipped };
        found = this.latest;
      } else {
        this.offered = false;
        this.log.info('The doorbell service does not offer the doorbell list: an expired session is noticed at the next refresh instead.');
        this.notOffered();
      }
    } catch (error) {
      if (signal.aborted) {
        return;
      }
      // Told before the session's loss, whose faults then come last.
      this.settled = true;
      this.onRead(undefined);
      if (error instanceof CloudError && error.sessionInvalid) {
        this.sessionRefused();
      } else {
        this.log.debug(`Could not read the doorbell list (${errorMessage(error)}): it is read again at its next turn.`);
      }
      return;
    } finally {
      this.reading = false;
    }
    this.settled = true;
    this.onRead(found);
  }
}

export interface ConnectionSettings {
  credentials: Credentials;
  doorbellServerUrl: string;
  doorbells: readonly SubscribedDoorbell[];
  /** Sent with the push registration as pn_service, os and pn_dict_version. */
  registration: { service: string; os: string; dictVersion: string };
  /** One of several accounts: its sign-out leaves the others' doorbells alone, and the log says so. */
  oneOfSeveral?: boolean;
}

export interface ConnectionOptions {
  settings: ConnectionSettings;
  store: SessionStore;
  log: SecretMaskingLogger;
  listener: ConnectionListener;
  endpoint: PushEndpoint;
  timing: ScheduleTiming;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
  /** The request slots, shared with the other accounts' connections; a set of its own when absent. */
  slots?: RequestSlots;
}

/**
 * The cloud side, in the background and in this order: a session, the push endpoint, the push
 * registration, the motion subscriptions. What fails is retried on the schedule, what succeeded is
 * refreshed on it, and a failure only the user can fix stops everything until they have. Between
 * the runs the doorbell list is read, which finds a session the service no longer accepts.
 */
export class Connection {
  private stopped = false;
  /**
   * Aborted when the session in use changes, and on shutdown: the requests of an attempt end with it. One
   * controller, never two combined with AbortSignal.any, which Node 24 can make forget an abort once
   * a source is garbage-collected (docs/architecture.md): an attempt must see that it was called off.
   */
  private sessionAbort = new AbortController();
  private readonly schedule: Schedule;
  private readonly subscriptions: Subscriptions;
  /**
   * Every request to the doorbell service takes one: the runs' and the list reads' together stay within
   * the bound, every account's together when the platform hands each connection the same slots.
   */
  private readonly slots: RequestSlots;
  private readonly listRead: DoorbellListRead;
  /** The doorbell service with this session's token; gone when the session is. */
  private client: DoorbellClient | undefined;
  /** The session in use (its token, whether it was saved) and the last one refused. */
  private readonly inUse: SessionInUse = { token: undefined, unsaved: false, refused: undefined };
  private registeredAt: number | undefined;
  /** The last attempt failed in opening the push endpoint: it runs again once the endpoint is up. */
  private waitingForEndpoint = false;
  /** How far the attempt under way has come, to say where it stopped. */
  private stage: ConnectStage = 'session';
  private readonly ownSignIn: OwnSignIn;

  constructor(private readonly options: ConnectionOptions) {
    const { settings, timing, listener, log } = options;
    this.slots = options.slots ?? new RequestSlots(SUBSCRIPTION_CONCURRENCY);
    const planned = (nextRunAt: number | undefined) => listener.progressed?.({ nextRunAt, registeredAt: this.registeredAt });
    this.schedule = new Schedule(timing, (reason) => void this.run(reason), planned, () => void this.listRead.read(this.client, this.sessionAbort.signal));
    this.subscriptions = new Subscriptions(settings.doorbells, listener, log, this.slots);
    this.listRead = new DoorbellListRead(
      this.slots,
      log,
      () => void this.sessionRejected(),
      () => this.schedule.endListReads(),
      (list) => listener.doorbellListRead?.(list),
    );
    this.ownSignIn = new OwnSignIn(settings.credentials.account?.code);
  }

  start(): void {
    this.schedule.runNow();
  }

  /** Aborts requests in flight and clears the timer. */
  stop(): void {
    this.stopped = true;
    this.sessionAbort.abort();
    this.schedule.stop();
  }

  /**
   * The push endpoint is up (the relay stream opened). An attempt that failed only for want of it is
   * made again now rather than at its retry, which may be an hour away; one under way needs nothing.
   */
  endpointUp(): void {
    if (this.waitingForEndpoint) {
      this.waitingForEndpoint = false;
      this.schedule.runNow();
    }
  }

  /**
   * session.json changed on disk: the settings page signed in or out. This plugin's own writes (a
   * sign-in with account.code, a session marked invalid) change nothing here.
   */
  followSessionFile(session: StoredSession | undefined): void {
    const { credentials, credentials: { account } } = this.options.settings;
    if (credentials.doorbellAccessToken !== undefined || account === undefined || this.stopped || this.ownSignIn.holdsBack(session)) {
      return;
    }
    const news = sessionFileNews(session, account, this.inUse);
    if (news.kind === 'signed-out') {
      this.dropSession();
      this.stopUntilSignedIn('signed-out');
      this.options.log.warn(this.options.settings.oneOfSeveral === true ? advice.accountSignedOut : advice.signedOut);
    } else if (news.kind === 'other-account') {
      this.options.log.warn(advice.otherAccount(news.email, account.email));
    } else if (news.kind === 'signed-in') {
      this.options.log.info('Signed in on the settings page: registering for push notifications with the new session.');
      this.dropSession();
      this.schedule.runNow();
    }
  }

  /** Forgets the session in use, its registration and subscriptions, and ends its requests. */
  private dropSession(): void {
    this.sessionAbort.abort();
    this.sessionAbort = new AbortController();
    this.client = undefined;
    this.inUse.token = undefined;
    this.registeredAt = undefined;
    this.subscriptions.forgetConfirmed();
  }

  private async run(reason: RunReason): Promise<void> {
    this.waitingForEndpoint = false;
    if (reason === 'refresh') {
      this.registeredAt = undefined;
      this.subscriptions.forgetConfirmed();
    }
    const { signal } = this.sessionAbort;
    const outcome = await this.connect(signal).then((allSubscribed) => ({ allSubscribed }), (error: unknown) => ({ error }));
    // Called off: by shutdown, a refused session, or a new session whose own run is planned already.
    if (signal.aborted) {
      return;
    }
    if ('error' in outcome) {
      this.handleFailure(outcome.error);
    } else if (outcome.allSubscribed) {
      this.schedule.refreshLater();
    } else {
      this.retryLater('Some doorbells are not subscribed yet.');
    }
    // After a launch, a new session and each refresh (a retry leaves the reads be, unless none has
    // been made yet: a doorbell kept offline from the last run waits for one); never while paused for the user.
    if (reason !== 'retry' || !this.listRead.settled) {
      this.schedule.readListNow();
    }
  }

  /** One attempt at the whole chain; resolves whether every doorbell is subscribed. */
  private async connect(signal: AbortSignal): Promise<boolean> {
    const { settings, log, endpoint } = this.options;
    this.stage = 'session';
    const client = (this.client ??= await this.signIn(signal));
    // Shut down (or signed in anew) while signing in: opening the endpoint now would outlive its close.
    signal.throwIfAborted();
    this.stage = 'push-endpoint';
    const pushToken = await endpoint.open().catch((error: unknown) => {
      throw new EndpointNotOpen(error);
    });
    if (this.registeredAt === undefined) {
      this.stage = 'registration';
      await this.slots.run(() => client.registerPushDevice({ token: pushToken, ...settings.registration }, { signal }), signal);
      this.registeredAt = Date.now();
      log.info(`Registered for push notifications at ${endpoint.description}`);
    }
    return this.subscriptions.subscribePending(client, signal);
  }

  private async signIn(signal: AbortSignal): Promise<DoorbellClient> {
    const { settings, store, log, retry, timeoutMs } = this.options;
    const obtain = () => obtainAccessToken(settings.credentials, { store, log, retry, timeoutMs, signal });
    const { token: accessToken, signedInAt, unsaved } = await this.ownSignIn.obtain(obtain, (held) => this.followSessionFile(held));
    log.addSecrets(accessToken);
    // A session that changed meanwhile (signed out, or in anew on the settings page) is not this attempt's to set.
    signal.throwIfAborted();
    Object.assign(this.inUse, { token: accessToken, unsaved });
    this.options.listener.sessionInUse?.(signedInAt);
    return new DoorbellClient({ serverUrl: settings.doorbellServerUrl, accessToken, logger: log, retry, timeoutMs });
  }

  private handleFailure(error: unknown): void {
    if (error instanceof CloudError && error.sessionInvalid) {
      void this.sessionRejected();
    } else if (error instanceof SignInError) {
      this.waitForUser(error);
    } else if (error instanceof EndpointNotOpen) {
      this.waitingForEndpoint = true;
      this.options.listener.connectFailed?.('push-endpoint', error.cause);
      this.retryLater(error.message, 'as soon as it opens, at the latest');
    } else {
      this.options.listener.connectFailed?.(this.stage, error);
      this.retryLater(errorMessage(error));
    }
  }

  private retryLater(reason: string, when = ''): void {
    const delayMs = this.schedule.retryLater();
    const sentence = /[.!?]$/.test(reason) ? reason : `${reason}.`;
    this.options.log.warn(`${sentence} Trying again ${when === '' ? '' : `${when} `}in ${describeDuration(delayMs)}.`);
  }

  /**
   * Nothing is sent again until the user has fixed what only they can fix. Not being signed in yet is
   * the normal first start, a warning; a refused sign-in is an error.
   */
  private waitForUser(error: SignInError): void {
    this.stopUntilSignedIn('signed-out');
    this.options.log[error.notSignedIn ? 'warn' : 'error'](error.message);
  }

  /** Without a session nothing is held for it either: the relay stream closes until the next attempt. */
  private stopUntilSignedIn(why: SessionLoss): void {
    this.client = undefined;
    this.inUse.token = undefined;
    this.waitingForEndpoint = false;
    this.schedule.pause();
    this.options.listener.sessionUnavailable(why);
    void this.options.endpoint.suspend();
  }

  /**
   * The service refused the session (401, code 2010): it is not reused, here or after a restart. The
   * advice is logged once that is on record. The session's other requests are called off, so that a
   * run and a list read refused at once say so once.
   */
  private async sessionRejected(): Promise<void> {
    const { settings, store, log } = this.options;
    const refused = this.inUse.token;
    this.inUse.refused = refused;
    this.sessionAbort.abort();
    this.sessionAbort = new AbortController();
    this.stopUntilSignedIn(settings.credentials.doorbellAccessToken === undefined ? 'expired' : 'token-refused');
    if (settings.credentials.doorbellAccessToken !== undefined) {
      log.error(advice.tokenRejected);
      return;
    }
    await recordRefusal(store, refused, log);
    log.error(advice.sessionRejected);
  }
}

/**
 * One push endpoint (the relay stream, or the receiver) for every account: each account's connection
 * registers the same push token with its own session. An account holds the endpoint from the moment
 * its connection opens it until it loses its session; the endpoint is suspended only once no account
 * holds it, so one account signed out never closes the stream the others' alerts arrive on.
 */
export class SharedEndpoint {
  private readonly holders = new Set<symbol>();

  constructor(private readonly endpoint: PushEndpoint) {}

  /** One account's way to the endpoint, as its connection uses it. */
  share(): PushEndpoint {
    const holder = Symbol('account');
    const { endpoint, holders } = this;
    return {
      open: () => {
        holders.add(holder);
        return endpoint.open();
      },
      suspend: () => {
        holders.delete(holder);
        return holders.size === 0 ? endpoint.suspend() : Promise.resolve();
      },
      get description() {
        return endpoint.description;
      },
    };
  }
}
