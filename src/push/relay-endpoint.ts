import { insecureUrlProblem } from '../values/secure-url.js';
import type { SecretMaskingLogger } from '../log.js';
import type { PushSecrets } from '../session/push-secrets.js';
import { NotificationIntake } from './intake.js';
import type { DoorbellNotification } from './notification.js';
import { relayPushToken } from './push-token.js';
import { RelaySubscription } from './relay-subscription.js';
import type { RelayTiming } from './relay-timing.js';

export interface RelaySettings {
  /** No trailing slash. */
  relayUrl: string;
  relayToken?: string;
}

export interface RelayEndpointOptions {
  settings: RelaySettings;
  secrets: () => Promise<PushSecrets>;
  log: SecretMaskingLogger;
  onNotification: (notification: DoorbellNotification) => void;
  /** The relay stream has been down too long (true), or is back (false). */
  onDeliveryDown: (down: boolean) => void;
  timing: RelayTiming;
  /** How long the first open waits for the stream before the connection tries again later. */
  connectWaitMs: number;
  now?: () => number;
}

/**
 * Relay mode: one outgoing subscription to a relay speaking the ntfy protocol, registered as
 * `<relayUrl>/<topic>?up=1`. The relay only accepts a publish for a topic somebody subscribes to, so
 * the push token is handed out only once the stream is open.
 */
export class RelayEndpoint {
  private subscription: RelaySubscription | undefined;
  /** Shared by overlapping calls (a sign-in on the settings page runs the connection again), so one stream is opened. */
  private opening: Promise<string> | undefined;
  private closed = false;

  constructor(private readonly options: RelayEndpointOptions) {}

  get description(): string {
    return `the push relay ${this.options.settings.relayUrl}`;
  }

  /** A failed start (push.json unreadable, say) is tried again on the next call. */
  async open(): Promise<string> {
    const { settings, connectWaitMs } = this.options;
    this.opening ??= this.subscribe().catch((error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    const pushToken = await this.opening;
    const connected = await this.subscription?.whenConnected(connectWaitMs);
    this.throwIfClosed();
    if (!connected) {
      throw new Error(`The push relay ${settings.relayUrl} did not open a stream within ${connectWaitMs / 1000} s.`);
    }
    return pushToken;
  }

  /** Closes the stream, and keeps an open() still under way from opening one after shutdown. */
  async close(): Promise<void> {
    this.closed = true;
    await this.subscription?.stop();
  }

  private throwIfClosed(): void {
    if (this.closed) {
      throw new Error('The push relay endpoint is closed.');
    }
  }

  private async subscribe(): Promise<string> {
    const { settings, log, timing, now } = this.options;
    const problem = insecureUrlProblem(settings.relayUrl);
    if (problem !== undefined) {
      throw new Error(`Refusing to use the push relay at ${problem}`);
    }
    const { relayTopic } = await this.options.secrets();
    this.throwIfClosed();
    log.addSecrets(relayTopic, settings.relayToken);
    const intake = new NotificationIntake(this.options.onNotification, log, now);
    this.subscription = new RelaySubscription({
      relayUrl: settings.relayUrl,
      topic: relayTopic,
      token: settings.relayToken,
      log,
      timing,
      now,
      onMessage: (body) => {
        const verdict = intake.accept(body);
        if (!verdict.accepted) {
          log.debug(`Push relay: ignored a message (${verdict.reason})`);
        }
        return verdict.accepted;
      },
      onDeliveryDown: this.options.onDeliveryDown,
    });
    this.subscription.start();
    return relayPushToken(settings.relayUrl, relayTopic);
  }
}
