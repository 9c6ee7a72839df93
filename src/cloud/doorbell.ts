import { isDeviceId } from '../values/device-id.js';
import { readDoorbellList, type DoorbellList } from './doorbell-list.js';
import { CloudError } from './errors.js';
import { CloudHttp, type CloudLogger } from './http.js';
import type { CloudResponse } from './response.js';
import type { RetryPolicy } from './retry-policy.js';

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
