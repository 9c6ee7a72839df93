import type { Readable } from 'node:stream';
import { axios } from '../cloud/axios.js';

/** The relay's answer to a subscribe request: its status, and the stream of lines when it is 200. */
export interface RelayAnswer {
  status: number;
  retryAfter: string | undefined;
  /** Ended by the relay, or destroyed when the signal aborts. */
  body: Readable;
}

/**
 * `GET` of the relay's stream with the plugin's HTTP client. Every status is answered, for the caller
 * to judge; a redirect is not followed (it would carry the topic and the token to an address nobody
 * checked); nothing is decompressed or buffered, so each line is read as soon as it arrives; no proxy
 * from the environment, as before; no timeout, as a silent stream is the caller's watchdog's to end.
 */
export async function requestRelayStream(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<RelayAnswer> {
  const response = await axios.get<Readable>(url, {
    headers,
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
