import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readBoundedText } from './bounded-read.js';
import { isDeviceIdText } from './field-checks.js';
import { isLoopbackHost } from './loopback.js';
import type { DeliveryTarget } from './state.js';
import type { AccountDelivery, DeliveryResult, MotionOptions } from './types.js';

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

/**
 * POSTs one notification to each target, as the push delivery service would: the same body to each,
 * one after the other, in the order given.
 */
export async function deliverToTargets(
  targets: readonly DeliveryTarget[],
  deviceId: string,
  options: MotionOptions,
  signal: AbortSignal,
): Promise<AccountDelivery[]> {
  if (targets.length === 0) {
    throw new DeliveryError('no-push-token', 'no push token is registered (PATCH /clients_api/device first)');
  }
  const body = notificationText(deviceId, options);
  const urls = targets.map(({ pushToken }) => new URL(pushToken));
  const outside = urls.find((url) => !isLoopbackHost(url.hostname));
  if (outside !== undefined) {
    throw new DeliveryError('not-loopback', `refusing to deliver to ${outside.host}: the simulator sends to loopback addresses only`);
  }
  const deliveries: AccountDelivery[] = [];
  for (const [index, url] of urls.entries()) {
    deliveries.push({ account: targets[index].account, ...(await post(url, body, signal)) });
  }
  return deliveries;
}

/** POSTs a notification to one push token, as the push delivery service would. */
export async function deliverNotification(pushToken: string | undefined, deviceId: string, options: MotionOptions, signal: AbortSignal): Promise<DeliveryResult> {
  const targets = pushToken === undefined ? [] : [{ account: '', pushToken }];
  return leadingResult(await deliverToTargets(targets, deviceId, options, signal));
}

/** The answer that speaks for several deliveries: the first that was not a 2xx, else the first. */
export function leadingResult(deliveries: readonly AccountDelivery[]): DeliveryResult {
  const { status, body } = deliveries.find(({ status: answered }) => answered < 200 || answered > 299) ?? deliveries[0];
  return { status, body };
}

function post(target: URL, body: string, signal: AbortSignal): Promise<DeliveryResult> {
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
