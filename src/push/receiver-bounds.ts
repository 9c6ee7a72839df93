import type { ServerOptions } from 'node:http';

/**
 * What one client can hold of the receiver, which faces the internet: every connection costs memory
 * and a file descriptor for as long as it lasts (docs/cloud-protocol.md).
 */
export interface ReceiverBounds {
  /** A request's headers are complete this long after it began (a new connection's first: after it opened). */
  headersTimeoutMs: number;
  /** The whole request, body included, is complete this long after it began. */
  requestTimeoutMs: number;
  /** How often both are checked: a request runs over its time by at most this much. */
  checkIntervalMs: number;
  /** How long a connection may sit idle between requests. */
  keepAliveMs: number;
  /** The request line and headers together. */
  maxHeaderBytes: number;
  /**
   * Connections open at once; a new one takes the place of the oldest without a complete request,
   * else of the one idle longest, never of one whose delivery is being read or answered.
   */
  maxConnections: number;
}

/**
 * A delivery is one small request sent at once: a second is plenty, so these leave a slow network
 * room while keeping what a stranger holds small (a few hundred connections, each only seconds).
 */
export const RECEIVER_BOUNDS: Readonly<ReceiverBounds> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  checkIntervalMs: 1_000,
  keepAliveMs: 5_000,
  maxHeaderBytes: 8 * 1024,
  maxConnections: 256,
};

/**
 * A keep-alive client is told this much less than its connection really lives, so one that sends its
 * next request at the last moment it was told does not meet the connection closing.
 */
const KEEP_ALIVE_GRACE_MS = 1_000;

/** Node's HTTP server enforces all but the connection limit itself. */
export function serverOptions(bounds: ReceiverBounds): ServerOptions {
  const grace = Math.min(KEEP_ALIVE_GRACE_MS, bounds.keepAliveMs / 2);
  return {
    headersTimeout: bounds.headersTimeoutMs,
    requestTimeout: bounds.requestTimeoutMs,
    // Node's default checks every 30 s, which would let a connection outlive its timeout by that much.
    connectionsCheckingInterval: bounds.checkIntervalMs,
    keepAliveTimeout: bounds.keepAliveMs - grace,
    keepAliveTimeoutBuffer: grace,
    maxHeaderSize: bounds.maxHeaderBytes,
  };
}

