import { isLoopbackHost } from '../loopback.js';
import { listen } from '../servers.js';
import type { ListeningServer } from '../servers.js';
import { AccessControl } from './access.js';
import { MessageCache } from './cache.js';
import { RelayPublishError } from './errors.js';
import { createRelayHandler } from './handler.js';
import { peekBody } from './message-body.js';
import { relaySettings } from './options.js';
import type { RelaySettings } from './options.js';
import { publishMessage, publishReply } from './publish.js';
import type { PublishContext } from './publish.js';
import { RateVisitors } from './rate-visitors.js';
import { RefusalSlot } from './refusals.js';
import { isTopicName } from './routes.js';
import { StreamRegistry } from './streams.js';
import { answerSubscribe } from './subscribe.js';
import type { Relay, RelayMessage, RelayOptions, RelayRequest, SubscribeRefusal } from './types.js';

export type * from './types.js';
export { RelayPublishError } from './errors.js';
export type { NtfyError } from './errors.js';

/** Starts the loopback push relay, an ntfy server in miniature; `types.ts` is its contract. */
export async function startRelay(options: RelayOptions = {}): Promise<Relay> {
  const settings = relaySettings(options);
  if (!isLoopbackHost(settings.host)) {
    throw new Error(`the push relay binds to loopback addresses only, not ${settings.host}`);
  }
  const relay = new LocalRelay(settings);
  await relay.listen();
  return relay;
}

class LocalRelay implements Relay {
  readonly requests: RelayRequest[] = [];
  private readonly nowMs: () => number;
  private readonly streams: StreamRegistry;
  private readonly cache: MessageCache;
  private readonly rateVisitors: RateVisitors;
  private readonly refusals = new RefusalSlot();
  /** What publishing and subscribing share. */
  private readonly core: PublishContext;
  private server: ListeningServer | undefined;
  /** Where it listens, kept across stop() and start(), as a restarted relay keeps its address. */
  private address: string | undefined;

  constructor(private readonly settings: RelaySettings) {
    this.nowMs = settings.now;
    // A stream that ends leaves its subscriber seen at that moment.
    this.streams = new StreamRegistry(settings.keepaliveMs, (topics) => this.rateVisitors.seen(topics));
    this.cache = new MessageCache(() => Math.floor(this.nowMs() / 1000));
    this.rateVisitors = new RateVisitors(this.nowMs, (topic) => this.streams.count(topic));
    this.core = {
      cache: this.cache,
      streams: this.streams,
      rateVisitors: this.rateVisitors,
      subscriberRateLimiting: settings.subscriberRateLimiting,
      cacheSeconds: Math.floor(settings.cacheMs / 1000),
      nowMs: this.nowMs,
    };
  }

  async listen(): Promise<void> {
    const handler = createRelayHandler({
      requests: this.requests,
      access: new AccessControl(this.settings.tokens),
      refusals: this.refusals,
      subscribe: (route, params) => answerSubscribe(this.core, route, params),
      publish: (topic, body, unifiedPush) => publishReply(publishMessage(this.core, topic, body, unifiedPush)),
    });
    const port = this.address === undefined ? this.settings.port : Number(new URL(this.address).port);
    this.server = await listen(this.settings.host, port, handler);
    this.address = this.server.url;
  }

  get url(): string {
    if (this.address === undefined) {
      throw new Error('the push relay is not listening');
    }
    return this.address;
  }

  subscriberCount(topic: string): number {
    return this.streams.count(topic);
  }

  messages(topic: string): RelayMessage[] {
    return this.cache.messages(topic).map((message) => ({ ...message }));
  }

  publish(topic: string, body: string | Buffer, options: { unifiedPush?: boolean } = {}): RelayMessage {
    if (!isTopicName(topic)) {
      throw new TypeError(`${JSON.stringify(topic)} is not a topic name: 1-64 letters, digits, '-' and '_'`);
    }
    const outcome = publishMessage(this.core, topic, peekBody(body), options.unifiedPush ?? false);
    if ('error' in outcome) {
      throw new RelayPublishError(outcome.error);
    }
    return { ...outcome.message };
  }

  reset(): void {
    this.requests.length = 0;
  }

  dropStreams(): void {
    this.streams.destroyAll();
  }

  refuseSubscriptions(refusal: SubscribeRefusal): void {
    this.refusals.set(refusal);
  }

  setSilent(silent: boolean): void {
    this.streams.silent = silent;
  }

  injectLine(topic: string, line: string): void {
    this.streams.broadcast(topic, `${line}\n`);
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.streams.endAll();
    await server?.close();
  }

  async start(): Promise<void> {
    if (this.server !== undefined) {
      throw new Error('the push relay is listening already');
    }
    await this.listen();
  }

  close(): Promise<void> {
    return this.stop();
  }
}
