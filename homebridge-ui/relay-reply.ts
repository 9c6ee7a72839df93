import { errorMessage } from '#plugin/log.js';
import { MAX_LINE_BYTES, parseRelayLine } from '#plugin/push/relay/stream.js';
import { originOf } from '#plugin/values/address.js';
import { SettingsError } from './settings-error.js';

/** Where a test motion goes: the push token the plugin registers, and what answers there. */
export interface PushAddress {
  token: string;
  /** For messages: the relay, or the plugin's own receiver. */
  answeredBy: 'push relay' | 'push receiver';
  /** The setting that leads there, as the settings form names it. */
  setting: 'Relay Server' | 'Public Address';
}

/**
 * An ntfy relay answers a publish with the message it stored and passes on to the plugin's stream (an
 * event "message" with an id and a time), where a web page, a captive portal or a proxy answers 200
 * with anything else, and the test motion would go nowhere.
 */
export async function expectPublishReply(response: Response, { token, answeredBy, setting }: PushAddress, signal: AbortSignal, timeoutMs: number): Promise<void> {
  const origin = originOf(token);
  const reply = await replyText(response, signal).catch((error: unknown) => {
    throw new SettingsError(`The ${answeredBy} at ${origin} broke off its answer (${errorMessage(error)}); check the ${setting} (push.relayUrl).`);
  });
  if (signal.aborted) {
    throw new SettingsError(`The ${answeredBy} at ${origin} did not finish its answer within ${timeoutMs / 1000} s; check the ${setting} (push.relayUrl).`);
  }
  if (parseRelayLine(reply.trim()).kind !== 'message') {
    throw new SettingsError(
      `The ${answeredBy} at ${origin} answered HTTP ${response.status}, but not as an ntfy relay, so the test motion went nowhere: check the ${setting} (push.relayUrl).`,
    );
  }
}

/**
 * The start of an answer's body, enough for any message a relay stores; the rest is not read. An
 * abort ends the read, whether or not fetch heeds its signal, as the reader is held here.
 */
async function replyText(response: Response, signal: AbortSignal): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) {
    return '';
  }
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size <= MAX_LINE_BYTES && !signal.aborted) {
      const { done, value } = await reader.read();
      if (done) {
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } catch (error) {
    // Fetch ends the body with the signal's reason; the caller tells a timeout by the signal.
    if (!signal.aborted) {
      throw error;
    }
  } finally {
    signal.removeEventListener('abort', cancel);
    cancel();
  }
  return Buffer.concat(chunks).toString('utf8');
}
