import type { SecretMaskingLogger } from '../../log.js';
import type { PushSecrets } from '../../session/push-secrets.js';
import type { DropListener } from '../intake.js';
import { directPushToken, type DoorbellNotification } from '../notification.js';
import type { PushReceiver } from './receiver.js';

export interface DirectSettings {
  host: string;
  port: number;
  /** Where the push delivery service reaches the receiver. */
  publicUrl: string;
}

/**
 * Direct mode: the receiver inside the plugin, registered as `<publicUrl>/push/<secret>`. Opened
 * once, when the connection first needs the push token; closed on shutdown.
 */
export class DirectEndpoint {
  private opening: Promise<string> | undefined;
  private receiver: PushReceiver | undefined;
  private closed = false;

  constructor(
    private readonly settings: DirectSettings,
    private readonly secrets: () => Promise<PushSecrets>,
    private readonly log: SecretMaskingLogger,
    private readonly onNotification: (notification: DoorbellNotification) => void,
    /** Told once the receiver listens. */
    private readonly onListening: () => void = () => undefined,
    /** Told of each body refused as not a notification or dropped as a duplicate. */
    private readonly onDropped?: DropListener,
  ) {}

  get description(): string {
    return this.settings.publicUrl;
  }

  /** A failed start (the port in use, say) is tried again on the next call. */
  open(): Promise<string> {
    this.opening ??= this.start().catch((error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    return this.opening;
  }

  /**
   * Nothing to do without a session: the receiver holds nothing at the cloud or anywhere else, and
   * keeping its port spares the next sign-in a port another program may have taken meanwhile.
   */
  async suspend(): Promise<void> {}

  /**
   * Frees the port; never rejects. An open() still under way is waited for, so that a receiver it
   * starts cannot go on listening after shutdown.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.opening?.catch(() => undefined);
    await this.receiver?.close().catch(() => undefined);
  }

  private async start(): Promise<string> {
    const { host, port, publicUrl } = this.settings;
    // The receiver is loaded only here, in direct mode: relay mode never has one.
    const [{ receiverSecret }, { PushReceiver }] = await Promise.all([this.secrets(), import('./receiver.js')]);
    if (this.closed) {
      throw new Error('The push receiver is closed.');
    }
    this.log.addSecrets(receiverSecret);
    const receiver = new PushReceiver({ host, port, secret: receiverSecret, log: this.log, onNotification: this.onNotification, onDropped: this.onDropped });
    this.receiver = receiver;
    const address = await receiver.start();
    this.log.info(`Push receiver listening at ${address.host}:${address.port}`);
    this.onListening();
    return directPushToken(publicUrl, receiverSecret);
  }
}
