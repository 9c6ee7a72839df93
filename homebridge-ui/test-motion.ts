import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { isIP } from 'node:net';
import { parseConfig, type DoorbellSettings, type ParsedAccount, type PlatformSettings } from '#plugin/config/parse-config.js';
import type { PushSettings } from '#plugin/config/push-settings.js';
import { directPushToken, relayPushToken } from '#plugin/push/notification.js';
import { errorMessage } from '#plugin/log.js';
import type { PushSecrets } from '#plugin/session/push-secrets.js';
import { originOf } from '#plugin/values/address.js';
import { deviceIdText, isDeviceId, isJsonObject } from '#plugin/values/json.js';
import { SettingsError } from './settings-error.js';
import { responseUnlessAborted } from '#plugin/push/relay/stream.js';
import { expectPublishReply, type PushAddress } from './relay-reply.js';

/**
 * A test motion goes where the doorbell service delivers real ones, the push token the plugin
 * registers, so it proves the whole way in: address, port forward or proxy, receiver and accessory.
 */

/** As long as the plugin gives a cloud request: a receiver that takes longer is as good as unreachable. */
export const TEST_MOTION_TIMEOUT_MS = 10_000;

/** `/test-motion`'s answer. */
export interface TestMotionResult {
  delivered: true;
  /** The HTTP status of the push address: the relay's, or the plugin's own receiver's. */
  status: number;
  /** Direct mode: the public address failed from here, the receiver on this host took it. What that means. */
  warning?: string;
}

/**
 * The doorbell a test motion is for, from the page's request, the saved settings it is sent with, as
 * the plugin reads them, and the account that has it (the first that does, as the plugin serves it);
 * a SettingsError says what to fix first.
 */
export function testMotionTarget(request: unknown, block: unknown): { settings: PlatformSettings; doorbell: DoorbellSettings; account: ParsedAccount } {
  const deviceId = deviceIdText(isJsonObject(request) ? request.deviceId : undefined);
  if (!isDeviceId(deviceId)) {
    throw new SettingsError('Test motion needs the device id of a configured doorbell: an integer from 1 to 9223372036854775807.');
  }
  const config = block === undefined ? ({ status: 'unconfigured' } as const) : parseConfig(block);
  if (config.status === 'unconfigured') {
    throw new SettingsError('Test motion needs saved settings with a doorbell: add one, save, and try again.');
  }
  if (config.status === 'invalid') {
    throw new SettingsError(`Test motion needs valid saved settings: ${config.problems.join('; ')}. Fix them, save, and try again.`);
  }
  for (const account of config.accounts) {
    const doorbell = account.doorbells.find((candidate) => candidate.deviceId === deviceId);
    if (doorbell !== undefined) {
      return { settings: config.settings, doorbell, account };
    }
  }
  throw new SettingsError(`Doorbell ${deviceId} is not in the saved settings: add it, save, and try again.`);
}

/**
 * The push token the plugin registers, computed from the same settings and push.json. The one place
 * the settings page knows the delivery modes: the relay's topic URL, or the receiver's capability URL.
 */
export function pushAddressFor(settings: PushSettings, secrets: PushSecrets): PushAddress {
  return settings.mode === 'relay'
    ? { token: relayPushToken(settings.relay.relayUrl, secrets.relayTopic), answeredBy: 'push relay', setting: 'Relay Server' }
    : { token: directPushToken(settings.direct.publicUrl, secrets.receiverSecret), answeredBy: 'push receiver', setting: 'Public Address' };
}

/** Where the test motion went: the push token's HTTP status, and what to make of it when only this host's receiver took it. */
export interface TestMotionDelivery {
  status: number;
  warning?: string;
}

/** Nothing answered at the push address: no connection, or no answer in time. */
class AddressUnreachable extends SettingsError {}

/**
 * Sends the test motion to the push token the plugin registers. In direct mode, when the public
 * address fails from this host, the receiver on this host is tried too: a receiver that works behind
 * a router that cannot reach its own public address is told from one that does not work at all.
 */
export async function deliverTestMotion(push: PushSettings, secrets: PushSecrets, deviceId: string, options: TestMotionOptions): Promise<TestMotionDelivery> {
  const address = pushAddressFor(push, secrets);
  try {
    return { status: await sendTestMotion(address, deviceId, options) };
  } catch (publicFailure) {
    const local = push.mode === 'direct' ? localReceiverAddress(push.direct, secrets) : undefined;
    if (!(publicFailure instanceof AddressUnreachable) || local === undefined || local.token === address.token) {
      throw publicFailure;
    }
    const status = await sendTestMotion(local, deviceId, options).catch((localFailure: unknown) => {
      throw new SettingsError(`${errorMessage(publicFailure)} On this host, too: ${errorMessage(localFailure)}`);
    });
    const advice =
      `The receiver works here, but your public address ${originOf(address.token)} did not answer from inside your network; ` +
      'many routers cannot loop back to their own public address, so try it from outside.';
    return { status, warning: advice };
  }
}

/** Direct mode: the receiver on this host, where push.host and push.port have it listen; one listening on every address is asked on loopback. */
function localReceiverAddress({ host, port }: { host: string; port: number }, secrets: PushSecrets): PushAddress {
  const local = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const origin = `http://${isIP(local) === 6 ? `[${local}]` : local}:${port}`;
  return { token: directPushToken(origin, secrets.receiverSecret), answeredBy: 'push receiver', setting: 'Public Address' };
}

export interface TestMotionOptions {
  /**
   * Whether the plugin can be receiving: it registers its push token, and subscribes to the relay,
   * only with a session or a doorbell access token.
   */
  signedIn: () => Promise<boolean>;
  timeoutMs?: number;
}

/**
 * POSTs a motion notification for `deviceId` (a checked int64 decimal) to the push address as the
 * doorbell service would, over whatever scheme the plugin registered (its start-up warnings speak of
 * a plain-http address); resolves with the 2xx status. Every failure is a SettingsError naming the
 * problem and the address's origin only: its path is the secret.
 */
export async function sendTestMotion(address: PushAddress, deviceId: string, options: TestMotionOptions): Promise<number> {
  const { token: pushToken, answeredBy } = address;
  const { signedIn, timeoutMs = TEST_MOTION_TIMEOUT_MS } = options;
  const origin = originOf(pushToken);
  let response: Response;
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const request = fetch(pushToken, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: testNotification(deviceId),
      // A redirect would carry the secret path somewhere nobody configured.
      redirect: 'manual',
      signal: timeout,
    });
    // The page waits on this: the timeout must end the wait even where fetch loses its signal.
    response = await responseUnlessAborted(request, timeout);
  } catch (error) {
    throw new AddressUnreachable(`The ${answeredBy} could not be reached at ${origin}: ${whyUnreachable(error, timeoutMs, address)}.`);
  }
  if (response.ok && answeredBy === 'push relay') {
    await expectPublishReply(response, address, timeout, timeoutMs);
    return response.status;
  }
  await response.body?.cancel();
  if (response.ok) {
    return response.status;
  }
  // Asked only when it changes the advice; an unreadable session counts as signed in, the plainer case.
  const isSignedIn = response.status === 507 ? await signedIn().catch(() => true) : true;
  throw new SettingsError(`The ${answeredBy} at ${origin} did not take the test motion: ${whyRefused(response.status, address, isSignedIn)}.`);
}

/** The flat notification shape; the id is written as its digits, never through a JS number. */
function testNotification(deviceId: string): string {
  return `{"device_id":${deviceId},"kind":"motion","id":${JSON.stringify(`test-${randomBytes(8).toString('hex')}`)}}`;
}

function whyUnreachable(error: unknown, timeoutMs: number, { answeredBy, setting }: PushAddress): string {
  if (error instanceof Error && error.name === 'TimeoutError') {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return answeredBy === 'push relay'
        ? `nothing listens there; check the ${setting}`
        : `nothing listens there; check that Homebridge runs with the saved settings and is signed in, and that the ${setting} leads to its push receiver`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `its host name is not known; check the ${setting}`;
    default:
      return `the connection failed (${typeof code === 'string' ? code : 'network error'}); check the ${setting} and the network`;
  }
}

function whyRefused(status: number, { answeredBy, setting }: PushAddress, signedIn: boolean): string {
  const answered = `it answered HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim();
  if (status === 507 && answeredBy === 'push relay') {
    // A relay with subscriber-based rate limiting takes a publish only for a topic someone subscribed
    // to. Its status ("Insufficient Storage") would only mislead: what it means is that nobody listens.
    return signedIn
      ? 'the plugin is not receiving alerts yet. Check that Homebridge is running with the saved settings (restart it after saving them), then try again'
      : 'the plugin is not receiving alerts yet, as it is not signed in. Sign in above, then try again';
  }
  if (status === 404) {
    return `${answered}, so the ${setting} leads somewhere else than this plugin's ${answeredBy}`;
  }
  if (status >= 300 && status < 400) {
    return `${answered}, a redirect, which the push address never follows`;
  }
  return `${answered}; check the ${setting}`;
}
