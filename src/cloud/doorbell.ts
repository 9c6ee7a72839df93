import { isDeviceId } from '../values/device-id.js';
import { CloudHttp, type CloudLogger } from './http.js';
import type { RetryPolicy } from './retry-policy.js';

const DEVICE_PATH = '/clients_api/device';

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

/** The doorbell service: push registration and motion subscriptions. Any 2xx is success. */
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
}
