import { DoorbellClient } from '#plugin/cloud/doorbell.js';
import type { AccountDoorbell } from '#plugin/cloud/doorbell.js';
import { CloudError } from '#plugin/cloud/errors.js';
import type { RetryPolicy } from '#plugin/cloud/retry-policy.js';
import { withoutTrailingSlashes } from '#plugin/config/push-settings.js';
import type { SecretMaskingLogger } from '#plugin/log.js';
import { deviceIdText, isDeviceId } from '#plugin/values/json.js';
import { originOf } from '#plugin/values/address.js';
import { isJsonObject, isNonEmptyString } from '#plugin/values/json.js';
import { SettingsError } from './settings-error.js';

/**
 * The account's doorbells for the settings page, from the doorbell service's device list, each marked
 * when the saved settings hold it already, so the page can offer to add the others.
 */

export interface ListedDoorbell {
  /** The int64 id as its decimal digits: the page never turns it into a number. */
  deviceId: string;
  name: string;
  /** The model, as the service names it; '' when it gives none. */
  kind: string;
  /** The saved settings have a doorbell with this id. */
  configured: boolean;
}

type DoorbellListing =
  | { available: true; doorbells: ListedDoorbell[] }
  /** `refused`: the service no longer accepts the token it was asked with. */
  | { available: false; reason: string; refused?: 'session' | 'access-token' };

/** Where the settings form asks for the doorbell service's address. */
const SERVER_SETTING = 'Doorbell Server';

const NOT_OFFERED =
  "This doorbell service does not offer a list of the account's doorbells: type each doorbell's device id in the settings below.";

interface ListingRequest {
  /** The plugin's platform block as config.json holds it now. */
  block: Record<string, unknown>;
  accessToken: string;
  /** The token is the configured doorbellAccessToken, not the session's. */
  configuredToken: boolean;
  log: SecretMaskingLogger;
  retry: Partial<RetryPolicy>;
}

/** Asks the doorbell service; every failure but a refused token is a SettingsError in plain words. */
export async function listAccountDoorbells({ block, accessToken, configuredToken, log, retry }: ListingRequest): Promise<DoorbellListing> {
  const serverUrl = doorbellServerUrlOf(block);
  log.addSecrets(accessToken);
  let answer;
  try {
    answer = await new DoorbellClient({ serverUrl, accessToken, logger: log, retry }).listDoorbells();
  } catch (error) {
    if (error instanceof CloudError && error.sessionInvalid) {
      return configuredToken
        ? { available: false, reason: 'The doorbell service refused the Doorbell Access Token in the settings: replace it, save, and restart Homebridge.', refused: 'access-token' }
        : { available: false, reason: "The doorbell service no longer accepts this session: sign in again above to see the account's doorbells.", refused: 'session' };
    }
    throw new SettingsError(describeListFailure(error, serverUrl));
  }
  if (!answer.offered) {
    return { available: false, reason: NOT_OFFERED };
  }
  if (answer.skipped > 0) {
    log.warn(`The doorbell service listed ${answer.skipped} device${answer.skipped === 1 ? '' : 's'} without a usable device id; the settings page leaves them out.`);
  }
  const configured = configuredDeviceIds(block);
  return { available: true, doorbells: answer.doorbells.map((doorbell) => listed(doorbell, configured)) };
}

function listed({ deviceId, name, kind }: AccountDoorbell, configured: ReadonlySet<string>): ListedDoorbell {
  return { deviceId, name, kind: kind ?? '', configured: configured.has(deviceId) };
}

function doorbellServerUrlOf(block: Record<string, unknown>): string {
  const { doorbellServerUrl } = block;
  if (!isNonEmptyString(doorbellServerUrl) || !URL.canParse(doorbellServerUrl)) {
    throw new SettingsError(`Enter the ${SERVER_SETTING} address in the settings below and save: the account's doorbells are listed from there.`);
  }
  return withoutTrailingSlashes(doorbellServerUrl);
}

/** The saved doorbells' ids as decimal strings. */
function configuredDeviceIds(block: Record<string, unknown>): Set<string> {
  const doorbells = Array.isArray(block.doorbells) ? (block.doorbells as unknown[]) : [];
  return new Set(doorbells.map((doorbell) => deviceIdText(isJsonObject(doorbell) ? doorbell.deviceId : undefined)).filter(isDeviceId));
}

function describeListFailure(error: unknown, serverUrl: string): string {
  const origin = originOf(serverUrl);
  const listing = "The account's doorbells could not be listed";
  if (!(error instanceof CloudError)) {
    return `${listing}: something went wrong; see the Homebridge UI log.`;
  }
  switch (error.kind) {
    case 'network':
      return `${listing}: the doorbell service at ${origin} could not be reached. Check the ${SERVER_SETTING} address and the network.`;
    case 'timeout':
      return `${listing}: the doorbell service at ${origin} did not answer in time. Try again in a moment.`;
    case 'insecure':
      return `${listing}: the session is only sent over https, so the ${SERVER_SETTING} address must start with https:// (http:// only for this computer).`;
    case 'malformed':
      return `${listing}: the answer from ${origin} is not the doorbell service's. Check the ${SERVER_SETTING} address.`;
    case 'too-large':
      return `${listing}: the answer from ${origin} was larger than any list of doorbells, so it was not read. Check the ${SERVER_SETTING} address.`;
    default:
      return error.retryable
        ? `${listing}: the doorbell service at ${origin} is busy or down. Try again later.`
        : `${listing}: the doorbell service at ${origin} turned the request down. Try again later, or type the device ids in the settings below.`;
  }
}
