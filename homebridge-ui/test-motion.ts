import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { insecureUrlProblem } from '#plugin/cloud/secure-url.js';
import type { PushSettings } from '#plugin/config/parse-config.js';
import { directPushToken } from '#plugin/push/push-token.js';
import type { PushSecrets } from '#plugin/session/push-secrets.js';
import { SettingsError } from './settings-error.js';

/**
 * A test motion goes where the doorbell service delivers real ones, the push token the plugin
 * registers, so it proves the whole way in: address, port forward or proxy, receiver and accessory.
 */

/** As long as the plugin gives a cloud request: a receiver that takes longer is as good as unreachable. */
export const TEST_MOTION_TIMEOUT_MS = 10_000;

/**
 * The push token the plugin registers, computed from the same settings and push.json. The one place
 * the settings page knows the delivery mode: direct, the receiver's capability URL.
 */
export function pushTokenFor(settings: Pick<PushSettings, 'publicUrl'>, secrets: PushSecrets): string {
  return directPushToken(settings.publicUrl, secrets.receiverSecret);
}

/**
 * POSTs a motion notification for `deviceId` (a checked int64 decimal) to `pushToken` as the doorbell
 * service would; resolves with the 2xx status. Every failure is a SettingsError naming the problem and
 * the token's origin only: its path is the secret.
 */
export async function sendTestMotion(pushToken: string, deviceId: string, timeoutMs = TEST_MOTION_TIMEOUT_MS): Promise<number> {
  const insecure = insecureUrlProblem(pushToken);
  if (insecure !== undefined) {
    throw new SettingsError(`Test motion not sent: the push address holds a secret and is only used over https, and ${insecure}.`);
  }
  const origin = new URL(pushToken).origin;
  let response: Response;
  try {
    response = await fetch(pushToken, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: testNotification(deviceId),
      // A redirect would carry the secret path somewhere nobody configured.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new SettingsError(`The push receiver could not be reached at ${origin}: ${whyUnreachable(error, timeoutMs)}.`);
  }
  await response.body?.cancel();
  if (response.ok) {
    return response.status;
  }
  throw new SettingsError(`The push receiver at ${origin} did not take the test motion: ${whyRefused(response.status)}.`);
}

/** The flat notification shape; the id is written as its digits, never through a JS number. */
function testNotification(deviceId: string): string {
  return `{"device_id":${deviceId},"kind":"motion","id":${JSON.stringify(`test-${randomBytes(8).toString('hex')}`)}}`;
}

function whyUnreachable(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError') {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'nothing listens there; check that Homebridge runs with the saved settings and is signed in, and that the Public Address leads to its push receiver';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'its host name is not known; check the Public Address';
    default:
      return `the connection failed (${typeof code === 'string' ? code : 'network error'}); check the Public Address and the network`;
  }
}

function whyRefused(status: number): string {
  const answered = `it answered HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim();
  if (status === 404) {
    return `${answered}, so the Public Address leads somewhere else than this plugin's push receiver`;
  }
  if (status >= 300 && status < 400) {
    return `${answered}, a redirect, which the push address never follows`;
  }
  return `${answered}; check the Public Address`;
}
