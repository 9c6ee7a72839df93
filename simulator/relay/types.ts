/**
 * The public contract of the loopback push relay: a small server that speaks the ntfy protocol (the
 * subscribe API's JSON stream and the publish API) as ntfy's documentation describes it, so relay
 * mode is tested end to end without the internet. Tests, the demo and the end-to-end suite drive it
 * through this surface; the knobs make it misbehave the ways a real relay or network can.
 */

export interface RelayOptions {
  /** Bind address; loopback only. Default 127.0.0.1. */
  host?: string;
  /** Default: an ephemeral port. */
  port?: number;
  /**
   * Access tokens the relay accepts as `Authorization: Bearer <token>`. Absent or empty: no access
   * control at all (ntfy without an auth file: any Authorization header is ignored). Present: a
   * request with an unknown token gets 401 (code 40101), one without a token 403 (code 40301), for
   * subscribing and for publishing alike.
   */
  tokens?: readonly string[];
  /** How often an open stream gets a keepalive line. Default 45 s, as ntfy. */
  keepaliveMs?: number;
  /** How long published messages stay cached for `since=` and `poll=1`. Default 12 h, as ntfy. */
  cacheMs?: number;
  /**
   * ntfy's subscriber-based rate limiting, as on ntfy.sh: a UnifiedPush publish (`up=1`) to a topic
   * that has had no subscriber in the last 24 hours is refused with 507 (code 50701). Only topics of
   * exactly 14 characters starting with `up` can have one. Default true.
   */
  subscriberRateLimiting?: boolean;
  /** The relay's clock, in ms since the epoch; message `time` is this in whole seconds. */
  now?: () => number;
}

/** One cached message, as a `message` line of the JSON stream carries it. */
export interface RelayMessage {
  /** 12 random letters and digits. */
  id: string;
  /** Unix seconds. */
  time: number;
  /** Unix seconds: time + the cache duration. */
  expires: number;
  event: 'message';
  topic: string;
  /** The body as text, or its base64 with `encoding: "base64"` (UnifiedPush publish of non-UTF-8 bytes). */
  message: string;
  encoding?: 'base64';
}

export interface RelayRequest {
  method: string;
  /** Without the query string. */
  path: string;
  /** Without '?', '' when absent. */
  rawQuery: string;
  /** Lower-cased names, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The status answered (200 for a stream that was opened). */
  status: number;
}

/** The next `times` subscribe requests are answered with this status and ntfy's JSON error body. */
export interface SubscribeRefusal {
  status: number;
  /** Sent as a Retry-After header (ntfy itself never sends one; a proxy in front may). */
  retryAfter?: string;
  /** Default 1. */
  times?: number;
}

export interface Relay {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** Every request received, in order, since the start or the last reset(). */
  readonly requests: readonly RelayRequest[];
  /** Forgets the requests received so far (not the cache, the streams or the subscribers). */
  reset(): void;
  /** Open subscription streams for the topic right now. */
  subscriberCount(topic: string): number;
  /** The cached messages of the topic, oldest first. */
  messages(topic: string): RelayMessage[];
  /** Publishes as `POST /<topic>` (with `?up=1` when `unifiedPush`) would, skipping HTTP; returns the message. */
  publish(topic: string, body: string | Buffer, options?: { unifiedPush?: boolean }): RelayMessage;
  /** Ends every open stream at once, as a network break does. New subscriptions still work. */
  dropStreams(): void;
  /** Answers the next subscribe requests with an error instead of a stream. */
  refuseSubscriptions(refusal: SubscribeRefusal): void;
  /**
   * While silent, open streams get nothing, keepalives and messages included (messages are still
   * cached, and a new stream asking `since=` gets them). Ending the silence resumes keepalives.
   */
  setSilent(silent: boolean): void;
  /** Writes `line` plus '\n' to every open stream of the topic: garbage, old messages, unknown events. */
  injectLine(topic: string, line: string): void;
  /**
   * Stops listening and ends every stream, as a relay restarting does; its cache and what it knows of
   * its subscribers stay (ntfy keeps them in its cache file) for start().
   */
  stop(): Promise<void>;
  /** Listens again after stop(), at the same address. */
  start(): Promise<void>;
  /** Stops listening and ends every stream. */
  close(): Promise<void>;
}
