import pMap from 'p-map';
import { DoorbellClient } from './cloud/doorbell.js';
import { CloudError } from './cloud/errors.js';
import type { RetryPolicy } from './cloud/http.js';
import type { DoorbellSettings, PlatformSettings } from './config.js';
import { errorMessage } from './log.js';
import type { SecretMaskingLogger } from './log.js';
import type { DoorbellNotification } from './notification.js';
import { PushReceiver } from './push-receiver.js';
import type { SessionStore } from './session-store.js';
import { obtainAccessToken, SignInError } from './sign-in.js';

/** What the link tells the accessories. */
export interface LinkListener {
  subscribed(deviceId: string): void;
  subscriptionFailed(deviceId: string): void;
  /** The session is gone (401 or code 2010) or could not be had: every doorbell is in fault. */
  sessionUnavailable(): void;
  notification(notification: DoorbellNotification): void;
}

export interface LinkTiming {
  firstRetryMs: number;
  maxRetryMs: number;
  refreshMs: number;
}

export const DEFAULT_TIMING: LinkTiming = {
  firstRetryMs: 60_000,
  maxRetryMs: 60 * 60_000,
  refreshMs: 12 * 60 * 60_000,
};

const SUBSCRIPTION_CONCURRENCY = 8;

export interface DoorbellLinkOptions {
  settings: PlatformSettings;
  store: SessionStore;
  log: SecretMaskingLogger;
  listener: LinkListener;
  timing?: LinkTiming;
  retry?: Partial<RetryPolicy>;
}

/**
 * Runs the cloud side in the background, in this order: session, push receiver, push registration,
 * motion subscriptions. What fails is retried (from 1 minute, doubling, capped at 1 hour); success
 * is refreshed every 12 hours. A single timer drives it, so at most one cycle runs at a time.
 */
export class DoorbellLink {
  private readonly abort = new AbortController();
  private readonly timing: LinkTiming;
  private readonly confirmed = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private receiver: PushReceiver | undefined;
  /** `<publicUrl>/push/<secret>`, set once the receiver listens. */
  private pushToken: string | undefined;
  private client: DoorbellClient | undefined;
  private registered = false;
  private failures = 0;

  constructor(private readonly options: DoorbellLinkOptions) {
    this.timing = options.timing ?? DEFAULT_TIMING;
  }

  start(): void {
    this.schedule(0);
  }

  /** Aborts requests in flight, clears the timer and frees the receiver's port. Never rejects. */
  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      await this.receiver?.close();
    } catch (error) {
      this.options.log.debug(`Push receiver close: ${errorMessage(error)}`);
    }
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private schedule(delayMs: number, refresh = false): void {
    if (this.stopped) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (refresh) {
        this.registered = false;
        this.confirmed.clear();
      }
      void this.cycle();
    }, delayMs);
  }

  private async cycle(): Promise<void> {
    try {
      const allSubscribed = await this.connect();
      if (allSubscribed) {
        this.failures = 0;
        this.schedule(this.timing.refreshMs, true);
      } else {
        this.retryLater('Some doorbells are not subscribed yet.');
      }
    } catch (error) {
      this.handleFailure(error);
    }
  }

  /** One pass of the whole chain; resolves whether every doorbell is subscribed. */
  private async connect(): Promise<boolean> {
    const { settings, log } = this.options;
    const signal = this.abort.signal;
    if (this.client === undefined) {
      const accessToken = await obtainAccessToken({ ...this.options, signal });
      log.addSecrets(accessToken);
      this.client = new DoorbellClient({ serverUrl: settings.doorbellServerUrl, accessToken, logger: log, retry: this.options.retry });
    }
    this.pushToken ??= await this.startReceiver();
    if (!this.registered) {
      const { service, os, dictVersion } = settings.push;
      await this.client.registerPushDevice({ token: this.pushToken, service, os, dictVersion }, { signal });
      this.registered = true;
      log.info(`Registered for push notifications at ${settings.push.publicUrl}`);
    }
    return this.subscribeAll(this.client);
  }

  /** Starts the receiver once; its capability URL is what the service delivers to. */
  private async startReceiver(): Promise<string> {
    const { settings, store, log, listener } = this.options;
    const secret = await store.receiverSecret();
    log.addSecrets(secret);
    const receiver = new PushReceiver({
      host: settings.push.host,
      port: settings.push.port,
      secret,
      log,
      onNotification: (notification) => listener.notification(notification),
    });
    const address = await receiver.start();
    this.receiver = receiver;
    log.info(`Push receiver listening at ${address.host}:${address.port}`);
    return `${settings.push.publicUrl}/push/${secret}`;
  }

  private async subscribeAll(client: DoorbellClient): Promise<boolean> {
    const { settings, log, listener } = this.options;
    const pending = settings.doorbells.filter((doorbell) => !this.confirmed.has(doorbell.deviceId));
    const failures = await pMap(pending, (doorbell) => this.subscribe(client, doorbell), {
      concurrency: SUBSCRIPTION_CONCURRENCY,
      signal: this.abort.signal,
    });
    const sessionError = failures.find((error) => error instanceof CloudError && error.sessionInvalid);
    if (sessionError !== undefined) {
      throw sessionError;
    }
    pending.forEach((doorbell, index) => {
      if (failures[index] === undefined) {
        this.confirmed.add(doorbell.deviceId);
        listener.subscribed(doorbell.deviceId);
      } else {
        listener.subscriptionFailed(doorbell.deviceId);
        log.warn(`Could not subscribe to motion alerts of ${doorbell.name}: ${errorMessage(failures[index])}`);
      }
    });
    log.info(`${this.confirmed.size} of ${settings.doorbells.length} doorbells subscribed to motion alerts`);
    return this.confirmed.size === settings.doorbells.length;
  }

  /** Resolves the failure instead of rejecting, so one doorbell cannot stop the others. */
  private async subscribe(client: DoorbellClient, doorbell: DoorbellSettings): Promise<unknown> {
    try {
      await client.subscribeToMotion(doorbell.deviceId, { signal: this.abort.signal });
      return undefined;
    } catch (error) {
      return error;
    }
  }

  private handleFailure(error: unknown): void {
    if (this.stopped) {
      return;
    }
    if (error instanceof CloudError && error.sessionInvalid) {
      void this.invalidateSession();
    } else if (error instanceof SignInError || isPermanentSignInFailure(error, this.client)) {
      this.options.log.error(errorMessage(error));
      this.options.listener.sessionUnavailable();
    } else {
      this.retryLater(errorMessage(error));
    }
  }

  private retryLater(reason: string): void {
    const delay = Math.min(this.timing.firstRetryMs * 2 ** this.failures, this.timing.maxRetryMs);
    this.failures += 1;
    this.options.log.warn(`${reason} Trying again in ${formatDelay(delay)}.`);
    this.schedule(delay);
  }

  /** No request is repeated until a new session exists: that takes the user, and a restart. */
  private async invalidateSession(): Promise<void> {
    const { settings, store, log, listener } = this.options;
    this.client = undefined;
    listener.sessionUnavailable();
    if (settings.doorbellAccessToken !== undefined) {
      log.error('The doorbell service no longer accepts doorbellAccessToken. Replace it and restart Homebridge.');
      return;
    }
    log.error(
      'The doorbell service no longer accepts this session. Request a new verification code in the doorbell app, ' +
        'put it in account.code, and restart Homebridge.',
    );
    try {
      await store.markSessionInvalid();
    } catch (storeError) {
      log.warn(`Could not record the invalid session: ${errorMessage(storeError)}`);
    }
  }
}

/**
 * Before a session exists, an answer the service gave (wrong code, unknown account) or an address
 * the plugin refuses will not change by asking again; only the user can fix it.
 */
function isPermanentSignInFailure(error: unknown, client: DoorbellClient | undefined): boolean {
  return client === undefined && error instanceof CloudError && !error.retryable;
}

function formatDelay(ms: number): string {
  if (ms >= 60_000) {
    const minutes = Math.round(ms / 60_000);
    return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  }
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}
