import { exactDeviceId, isDeviceId, isJsonObject, JsonNumber, parseJsonKeepingNumberText } from '../values/json.js';
import type { CloudResponse } from './envelope.js';
import { CloudError } from './errors.js';
import { CloudHttp, type CloudLogger } from './http.js';
import type { RetryPolicy } from './retry-policy.js';

/** The doorbell service: registration, subscriptions, and the account's device list, ids exact. */

/**
 * The account's devices as the doorbell service lists them (docs/cloud-protocol.md): the lists that
 * hold doorbells are the account's own, those shared with it, and cameras, which send motion alerts
 * the same way. Chimes, and any list the service may add, are not doorbells.
 */
const DOORBELL_LISTS = ['doorbots', 'authorized_doorbots', 'stickup_cams'] as const;

type DoorbellListName = (typeof DOORBELL_LISTS)[number];

/** One doorbell of the account. */
export interface AccountDoorbell {
  /** The int64 id as its exact decimal digits. */
  deviceId: string;
  /** The name the doorbell app shows, or `Doorbell <deviceId>` when the service gives none. */
  name: string;
  /** The model, as the service names it; absent when it gives none. */
  kind?: string;
  /** Which list it came from: the account's own doorbells, shared ones, or cameras. */
  list: DoorbellListName;
  /**
   * The battery's charge in percent (0 to 100); null when the service says there is none (a wired
   * doorbell); absent when the entry does not say, or says something that is not a percentage.
   */
  battery?: number | null;
  /** Whether the service reaches the doorbell; absent when the entry does not say. */
  online?: boolean;
}

export interface DoorbellList {
  doorbells: AccountDoorbell[];
  /** Entries of the doorbell lists left out: not an object, or without a usable id. */
  skipped: number;
}

/**
 * Reads the body of the device list; undefined when it is not a JSON object. Everything else is
 * tolerated entry by entry: a list that is missing or not an array holds nothing, a bad entry is
 * skipped and counted, and a device listed twice (own and shared, say) is kept once.
 */
export function readDoorbellList(body: string): DoorbellList | undefined {
  let document: unknown;
  try {
    document = parseJsonKeepingNumberText(body);
  } catch {
    return undefined;
  }
  if (!isJsonObject(document)) {
    return undefined;
  }
  const doorbells = new Map<string, AccountDoorbell>();
  let skipped = 0;
  for (const list of DOORBELL_LISTS) {
    const entries = document[list];
    for (const entry of Array.isArray(entries) ? (entries as unknown[]) : []) {
      const doorbell = readEntry(entry, list);
      if (doorbell === undefined) {
        skipped += 1;
      } else if (!doorbells.has(doorbell.deviceId)) {
        doorbells.set(doorbell.deviceId, doorbell);
      }
    }
  }
  return { doorbells: [...doorbells.values()], skipped };
}

function readEntry(entry: unknown, list: DoorbellListName): AccountDoorbell | undefined {
  if (!isJsonObject(entry)) {
    return undefined;
  }
  const deviceId = exactDeviceId(entry.id);
  if (deviceId === undefined) {
    return undefined;
  }
  const description = typeof entry.description === 'string' ? entry.description.trim() : '';
  const kind = typeof entry.kind === 'string' && entry.kind !== '' ? entry.kind : undefined;
  const battery = readBattery(entry.battery_life);
  const online = readConnection(entry.alerts);
  return {
    deviceId,
    name: description === '' ? `Doorbell ${deviceId}` : description,
    ...(kind === undefined ? {} : { kind }),
    list,
    ...(battery === undefined ? {} : { battery }),
    ...(online === undefined ? {} : { online }),
  };
}

/** A number, or a decimal string, from 0 to 100; null for null; undefined for anything else. */
function readBattery(value: unknown): number | null | undefined {
  if (value === null) {
    return null;
  }
  // The exact-JSON parser keeps a number as its text; a string must be a plain decimal.
  let level: number | undefined;
  if (value instanceof JsonNumber) {
    level = Number(value.source);
  } else if (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)) {
    level = Number(value);
  }
  return level !== undefined && level >= 0 && level <= 100 ? level : undefined;
}

/** `alerts.connection`: "online" or "offline"; anything else says nothing. */
function readConnection(alerts: unknown): boolean | undefined {
  if (!isJsonObject(alerts)) {
    return undefined;
  }
  return alerts.connection === 'online' ? true : alerts.connection === 'offline' ? false : undefined;
}

const DEVICE_PATH = '/clients_api/device';
const DEVICE_LIST_PATH = '/clients_api/ring_devices';

/** A service that does not offer the device list answers one of these: the user types device ids instead. */
const LIST_NOT_OFFERED = new Set([404, 405]);

/** The account's doorbells, or word that this service does not offer the list. */
export type DoorbellListAnswer = ({ offered: true } & DoorbellList) | { offered: false };

export interface PushRegistration {
  /** The push_notification_token: where alerts are delivered, a capability, so a secret. */
  token: string;
  /** pn_service */
  service: string;
  os: string;
  /** pn_dict_version */
  dictVersion: string;
}

export interface DoorbellClientOptions {
  serverUrl: string;
  /** Sent as `Authorization: Bearer <accessToken>`. */
  accessToken: string;
  logger?: CloudLogger;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
}

/** The doorbell service: push registration, motion subscriptions and the device list. */
export class DoorbellClient {
  private readonly http: CloudHttp;
  private readonly authorization: Record<string, string>;

  constructor(options: DoorbellClientOptions) {
    const { serverUrl, accessToken, logger, retry, timeoutMs } = options;
    this.http = new CloudHttp({ baseUrl: serverUrl, logger, retry, timeoutMs });
    this.authorization = { Authorization: `Bearer ${accessToken}` };
  }

  async registerPushDevice(registration: PushRegistration, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.http.send({
      method: 'PATCH',
      path: DEVICE_PATH,
      headers: () => this.authorization,
      // Key order is the wire format's.
      body: {
        device: {
          metadata: { pn_dict_version: registration.dictVersion, pn_service: registration.service },
          os: registration.os,
          push_notification_token: registration.token,
        },
      },
      carriesSecrets: true,
      signal: options.signal,
    });
  }

  /** `deviceId` is a decimal string: an int64 id does not survive a JS number. */
  async subscribeToMotion(deviceId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!isDeviceId(deviceId)) {
      throw new RangeError('A doorbell device id must be a decimal string from 1 to 9223372036854775807');
    }
    await this.http.send({
      method: 'POST',
      path: `/clients_api/doorbots/${deviceId}/motions_subscribe`,
      headers: () => this.authorization,
      carriesSecrets: true,
      signal: options.signal,
    });
  }

  /**
   * The account's doorbells (docs/cloud-protocol.md). Rejects with a CloudError otherwise: 401 is a
   * session the service no longer accepts; an answer that is not a JSON object is malformed.
   */
  async listDoorbells(options: { signal?: AbortSignal } = {}): Promise<DoorbellListAnswer> {
    const request = { method: 'GET', path: DEVICE_LIST_PATH } as const;
    let response: CloudResponse;
    try {
      response = await this.http.send({ ...request, headers: () => this.authorization, carriesSecrets: true, signal: options.signal });
    } catch (error) {
      if (error instanceof CloudError && error.kind === 'http' && LIST_NOT_OFFERED.has(error.status ?? 0)) {
        return { offered: false };
      }
      throw error;
    }
    const list = readDoorbellList(response.body);
    if (list === undefined) {
      throw new CloudError({ kind: 'malformed', ...request, status: response.status, detail: 'not a JSON object' });
    }
    return { offered: true, ...list };
  }
}
