import type { Readable } from 'node:stream';
import { axios } from '../cloud/http.js';

/** The relay's answer to a subscribe request: its status, and the stream of lines when it is 200. */
export interface RelayAnswer {
  status: number;
  retryAfter: string | undefined;
  /** Ended by the relay, or destroyed when the signal aborts. */
  body: Readable;
}

/** One subscribe request: the topic and the token are secrets; `since` an id or a unix time. */
export interface RelayStreamRequest {
  relayUrl: string;
  topic: string;
  token?: string;
  since?: string;
}

/**
 * `GET` of the relay's stream with the plugin's HTTP client. Every status is answered, for the caller
 * to judge; a redirect is not followed (it would carry the topic and the token to an address nobody
 * checked); nothing is decompressed or buffered, so each line is read as soon as it arrives; no proxy
 * from the environment, as before; no timeout, as a silent stream is the caller's watchdog's to end.
 */
export async function requestRelayStream(stream: RelayStreamRequest, signal: AbortSignal): Promise<RelayAnswer> {
  const { relayUrl, topic, token, since } = stream;
  const url = `${relayUrl}/${topic}/json${since === undefined ? '' : `?since=${encodeURIComponent(since)}`}`;
  // Uncompressed: a compressing proxy in front of the relay could hold lines back to fill a block.
  const identity = { 'Accept-Encoding': 'identity' };
  const response = await axios.get<Readable>(url, {
    headers: token === undefined ? identity : { ...identity, Authorization: `Bearer ${token}` },
    signal,
    responseType: 'stream',
    validateStatus: () => true,
    maxRedirects: 0,
    decompress: false,
    proxy: false,
  });
  const retryAfter = response.headers['retry-after'];
  return { status: response.status, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined, body: response.data };
}
