import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readBoundedText } from './bounded-read.js';
import { isDeviceIdText } from './field-checks.js';
import { isLoopbackHost } from './loopback.js';
import type { DeliveryResult, MotionOptions } from './types.js';

/** A receiver that does not answer within this long counts as unreachable. */
const DELIVERY_TIMEOUT_MS = 5000;

/** Enough for any receiver's reply; more is cut off. */
const MAX_REPLY_BYTES = 64 * 1024;

export type DeliveryFailure = 'no-push-token' | 'not-loopback' | 'bad-device-id';

/** Why a notification was not sent at all (as opposed to sent and answered badly). */
export class DeliveryError extends Error {
  override readonly name = 'DeliveryError';

  constructor(
    readonly failure: DeliveryFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The notification text. The device id is written as its digits, never through JSON.stringify of a
 * Number, which would turn 9007199254740993 into ...992.
 */
function notificationText(deviceId: string, options: MotionOptions): string {
  if (options.rawBody !== undefined) {
    return options.rawBody;
  }
  if (!isDeviceIdText(deviceId)) {
    throw new DeliveryError('bad-device-id', 'device id must be a decimal integer from 1 to 9223372036854775807');
  }
  const fields = [
    `"device_id":${deviceId}`,
    `"kind":${JSON.stringify(options.kind ?? 'motion')}`,
    ...(options.subtype === undefined ? [] : [`"subtype":${JSON.stringify(options.subtype)}`]),
    `"id":${JSON.stringify(options.id ?? `evt-${randomUUID()}`)}`,
    `"created_at":${JSON.stringify(new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'))}`,
  ];
  return `{${fields.join(',')}}`;
}

/** POSTs a notification to the registered push token, as the push delivery service would. */
export async function deliverNotification(
  pushToken: string | undefined,
  deviceId: string,
  options: MotionOptions,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  if (pushToken === undefined) {
    throw new DeliveryError('no-push-token', 'no push token is registered (PATCH /clients_api/device first)');
  }
  const body = notificationText(deviceId, options);
  const target = new URL(pushToken);
  if (!isLoopbackHost(target.hostname)) {
    throw new DeliveryError('not-loopback', `refusing to deliver to ${target.host}: the simulator sends to loopback addresses only`);
  }
  return new Promise((resolve) => {
    const unreachable = (): void => resolve({ status: 0, body: '' });
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(target, {
      method: 'POST',
      agent: false,
      signal,
      timeout: DELIVERY_TIMEOUT_MS,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    request.on('response', (response) => {
      readBoundedText(response, MAX_REPLY_BYTES).then(({ text }) => resolve({ status: response.statusCode ?? 0, body: text }), unreachable);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', unreachable);
    request.end(body);
  });
}
