import type { RelaySettings } from '../../config/push-settings.js';
import type { SecretMaskingLogger } from '../../log.js';
import type { PushSecrets } from '../../session/push-secrets.js';
import type { RelayMarkStore } from '../../session/relay-mark.js';
import { insecureUrlProblem } from '../../values/address.js';
import { type IntakeDrop, NotificationIntake } from '../intake.js';
import { type DoorbellNotification, relayPushToken } from '../notification.js';
import { KeptCatchUpPoint } from './messages.js';
import { type DeliveryOutage, ImpostorWarning, RelaySubscription, type RelayTiming } from './subscription.js';

export interface RelayEndpointOptions {
  settings: RelaySettings;
  secrets: () => Promise<PushSecrets>;
  /** relay.json: where the first stream after a restart picks up. Without it, only a break within the run is caught up on. */
  relayMarks?: Pick<RelayMarkStore, 'read' | 'write'>;
  log: SecretMaskingLogger;
  onNotification: (notification: DoorbellNotification) => void;
  /**
   * Told of each message that was not a notification, repeated an event id or came too late to be
   * news (stale). Lines that are not relay events at all are not notifications refused: a page or proxy
   * answering in the relay's place is what they show, and it has its own warning. A stale one comes
   * with `ageMs`: how long after it was sent it arrived.
   */
  onDropped?: (cause: IntakeDrop | 'stale', ageMs?: number) => void;
  /** The relay stream has been down too long (true, and why), or is back, or closed on purpose (false). */
  onDeliveryDown: (down: boolean, outage?: DeliveryOutage) => void;
  /** The stream is open, each time it opens: a registration that waited for it can go ahead. */
  onConnected?: () => void;
  timing: RelayTiming;
  /** How long an open() waits for the stream before the connection tries again later. */
  connectWaitMs: number;
  /** This machine's wall clock, held against the relay's `time` stamps (Date.now when absent). */
  now?: () => number;
  /** This machine's monotonic clock, for the stream's timings and the spacing of relay.json's writes (performance.now when absent). */
  monotonicNow?: () => number;
}

const STREAM_CLOSED = 'The push relay stream was closed before it opened.';

/** The stream of one session: the push token it is registered as, and the subscription. */
interface OpenStream {
  pushToken: string;
  subscription: RelaySubscription;
}

/**
 * Relay mode: one outgoing subscription to a relay speaking the ntfy protocol, registered as
 * `<relayUrl>/<topic>?up=1`. The relay only accepts a publish for a topic somebody subscribes to, so
 * the push token is handed out only once the stream is open. The stream is held only while there is a
 * session: `suspend` closes it (a sign-out), and the next open() opens a new one.
 */
export class RelayEndpoint {
  /** Shared by overlapping calls (a sign-in on the settings page runs the connection again), so one stream is opened. */
  private current: Promise<OpenStream> | undefined;
  /** The current stream's subscription, once started. */
  private subscription: RelaySubscription | undefined;
  /** Counts suspends: a stream started before one must not be opened after it. */
  private generation = 0;
  /** Streams being closed, waited for by close(). */
  private closing: Promise<void> = Promise.resolve();
  /** Whether the doorbells show the stream's outage: a stream closed on purpose is no outage. */
  private deliveryDown = false;
  private closed = false;
  /** One for the run: a sign-in after a sign-out does not say again that the address is no relay. */
  private readonly impostor: ImpostorWarning;
  /**
   * One for the run, and kept across runs: a stream reopened after a sign-out and a new sign-in, or
   * after a restart, asks for what the relay received while none was open.
   */
  private readonly catchUp: KeptCatchUpPoint;

  constructor(private readonly options: RelayEndpointOptions) {
    this.impostor = new ImpostorWarning(options.settings.relayUrl, options.log);
    this.catchUp = new KeptCatchUpPoint(options.relayMarks, options.log, options.monotonicNow);
  }

  get description(): string {
    return `the push relay ${this.options.settings.relayUrl}`;
  }

  /** A failed start (push.json unreadable, say) is tried again on the next call. */
  async open(): Promise<string> {
    const { settings, connectWaitMs } = this.options;
    this.throwIfClosed();
    const opening = (this.current ??= this.startStream());
    let stream: OpenStream;
    try {
      stream = await opening;
    } catch (error) {
      if (this.current === opening) {
        this.current = undefined;
      }
      throw error;
    }
    const connected = await stream.subscription.whenConnected(connectWaitMs);
    this.throwIfClosed();
    if (this.current !== opening) {
      throw new Error(STREAM_CLOSED);
    }
    if (!connected) {
      throw new Error(`The push relay ${settings.relayUrl} did not open a stream within ${connectWaitMs / 1000} s.`);
    }
    return stream.pushToken;
  }

  /**
   * Closes the stream until the next open(): without a session nothing is subscribed. Never rejects;
   * an open() under way fails.
   */
  async suspend(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    this.current = undefined;
    this.generation += 1;
    if (subscription !== undefined) {
      this.closing = Promise.all([this.closing, subscription.stop()]).then(() => undefined);
    }
    await this.closing;
    if (this.deliveryDown && !this.closed) {
      this.deliveryDown = false;
      this.options.onDeliveryDown(false);
    }
  }

  /**
   * Closes the stream for good (shutdown), and keeps an open() still under way from opening one after
   * it; then keeps where the next run's stream picks up, which the stream's end has settled.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.suspend();
    await this.catchUp.close();
  }

  private throwIfClosed(): void {
    if (this.closed) {
      throw new Error('The push relay endpoint is closed.');
    }
  }

  private async startStream(): Promise<OpenStream> {
    const { settings, log, timing, now, monotonicNow } = this.options;
    const problem = insecureUrlProblem(settings.relayUrl);
    if (problem !== undefined) {
      throw new Error(`Refusing to use the push relay at ${problem}`);
    }
    const generation = this.generation;
    const { relayTopic } = await this.options.secrets();
    log.addSecrets(relayTopic, settings.relayToken);
    await this.catchUp.resume(settings.relayUrl, relayTopic);
    this.throwIfClosed();
    if (generation !== this.generation) {
      throw new Error(STREAM_CLOSED);
    }
    const intake = new NotificationIntake(this.options.onNotification, log, undefined, this.options.onDropped);
    const subscription = new RelaySubscription({
      relay: settings,
      topic: relayTopic,
      log,
      timing,
      now,
      monotonicNow,
      impostor: this.impostor,
      catchUp: this.catchUp.point,
      onMessage: (body, relayTime) => {
        const decision = intake.accept(body, relayTime);
        if (!decision.accepted) {
          log.debug(`Push relay: ignored a message (${decision.reason})`);
        }
      },
      onDeliveryDown: (down, outage) => {
        this.deliveryDown = down;
        this.options.onDeliveryDown(down, outage);
      },
      onConnected: this.options.onConnected,
      onStale: (ageMs) => this.options.onDropped?.('stale', ageMs),
    });
    this.subscription = subscription;
    subscription.start();
    return { pushToken: relayPushToken(settings.relayUrl, relayTopic), subscription };
  }
}
