/**
 * Everything around the plugin during the week: the simulated account and doorbell services, the
 * loopback relay and the home's connection to it, the disk under status.json, and the settings page
 * signing in again. It does what the week's plan says, when the driver says so; it decides nothing.
 */
import { request } from 'node:http';
import type { DeviceHealth, RecordedRequest, Simulator } from '../../simulator/index.js';
import { CONTROL_PREFIX } from '../../simulator/control-api.js';
import { startSimulator } from '../../simulator/index.js';
import { deliverNotification } from '../../simulator/delivery.js';
import { startRelay, type Relay } from '../../simulator/relay/index.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { SecretMaskingLogger } from '../../src/log.js';
import { openAccountFolder } from '../../src/storage/data-folder.js';
import { SessionStore } from '../../src/session/session-store.js';
import { signInWithCode } from '../../src/session/sign-in.js';
import type { StatusSink } from '../../src/status/plugin-status.js';
import { ACCOUNT, platformConfig } from '../lib/platform-harness.js';
import { HomeLink } from './home-link.js';
import type { SoakLogger } from './plugin-log.js';

/** The code the settings page signs in with after the session expired; the launch used ACCOUNT's. */
const SECOND_CODE = '654321';

/**
 * The week runs two accounts from one platform block: the home's (ACCOUNT, the week's doorbells),
 * whose session expires and is signed in again, and a cabin's with two doorbells of its own, whose
 * alerts must keep flowing meanwhile.
 */
export const EXPIRING_LABEL = 'Home';
export const OTHER_ACCOUNT = {
  label: 'Cabin',
  email: 'cabin@example.com',
  code: '000222',
  doorbells: [
    { deviceId: '2000001', name: 'Cabin Porch' },
    { deviceId: '2000002', name: 'Cabin Shed' },
  ],
} as const;

/** Whether a request the simulator answered acted for the home's account (the one whose session expires). */
export function actsForHome({ account }: RecordedRequest): boolean {
  return account?.toLowerCase() === ACCOUNT.email.toLowerCase();
}

/** Every doorbell-service route the plugin calls answers 503 while the service is down. */
const DOORBELL_ROUTES = ['register', 'subscribe', 'devices'] as const;

/** status.json in front of a disk that may be full. */
export class FullDisk {
  full = false;
  /** Writes refused (each an ENOSPC) while full. */
  refused = 0;

  readonly wrap = (file: StatusSink): StatusSink => ({
    path: file.path,
    replace: (status) => {
      if (!this.full) {
        return file.replace(status);
      }
      this.refused += 1;
      return Promise.reject(Object.assign(new Error(`ENOSPC: no space left on device, write '${file.path}'`), { code: 'ENOSPC', errno: -28, syscall: 'write' }));
    },
  });
}

export interface CloudOptions {
  doorbells: ReadonlyArray<{ deviceId: string; name: string }>;
  storagePath: string;
  /** True time: the relay's clock, which the host's clock jumps leave alone. */
  now: () => number;
  /** Each request the simulated services answered, as they answer it. */
  onRequest: (request: RecordedRequest) => void;
  /** For the settings page's own log. */
  logger: SoakLogger;
}

export class Cloud {
  readonly disk = new FullDisk();

  private constructor(
    readonly sim: Simulator,
    readonly relay: Relay,
    readonly home: HomeLink,
    private readonly options: CloudOptions,
  ) {}

  static async start(options: CloudOptions): Promise<Cloud> {
    const sim = await startSimulator({
      accounts: [{ ...ACCOUNT }, { email: OTHER_ACCOUNT.email, code: OTHER_ACCOUNT.code, doorbells: OTHER_ACCOUNT.doorbells.map(({ deviceId }) => deviceId) }],
      doorbells: options.doorbells.map(({ deviceId }) => deviceId),
      onRequest: options.onRequest,
    });
    const relay = await startRelay({ now: options.now });
    const home = await HomeLink.open(relay.url, options.now);
    return new Cloud(sim, relay, home, options);
  }

  /**
   * The platform block: relay mode through the home's connection to the relay, with two `accounts`:
   * the home's doorbells under EXPIRING_LABEL, the cabin's under its own label.
   */
  platformConfig(): ReturnType<typeof platformConfig> {
    const { platform, name, motionTimeout, push, account, doorbellServerUrl } = platformConfig(this.sim, this.home.url);
    const home = { label: EXPIRING_LABEL, account, doorbellServerUrl, doorbells: this.options.doorbells };
    const cabin = {
      label: OTHER_ACCOUNT.label,
      account: { ...(account as Record<string, unknown>), email: OTHER_ACCOUNT.email, code: OTHER_ACCOUNT.code },
      doorbellServerUrl,
      doorbells: OTHER_ACCOUNT.doorbells,
    };
    return { platform, name, motionTimeout, push, accounts: [home, cabin] };
  }

  /**
   * The doorbell service sends a notification to the registered push token, as it would: straight to
   * the relay, which the home's connection does not stand between. True when the relay took it.
   */
  async deliver(deviceId: string, id: string, kind: 'ding' | 'motion'): Promise<boolean> {
    const pushToken = this.sim.pushToken;
    if (pushToken === undefined) {
      return false;
    }
    const token = new URL(pushToken);
    token.host = new URL(this.relay.url).host;
    const { status } = await deliverNotification(token.href, deviceId, { kind, id }, new AbortController().signal);
    return status === 200;
  }

  /** The home account's session stops working: every call with it gets 401 from now on; the cabin's keeps working. */
  expireSession(): void {
    this.sim.revokeAccount(ACCOUNT.email);
  }

  /** The settings page signs in with a new code and writes session.json, as the Homebridge UI's server does. */
  async signInOnSettingsPage(): Promise<void> {
    this.sim.addAccount({ ...ACCOUNT, code: SECOND_CODE });
    const parsed = parseConfig(this.platformConfig());
    const home = parsed.status === 'ok' ? parsed.accounts.find(({ label }) => label === EXPIRING_LABEL) : undefined;
    if (home?.account === undefined) {
      throw new Error(`the platform block has no account labelled ${EXPIRING_LABEL}`);
    }
    // A store of its own on the account's folder, as the settings page's server has in its own process.
    const store = new SessionStore(openAccountFolder(this.options.storagePath, home.key, this.options.logger), this.options.logger);
    await signInWithCode(home.account, SECOND_CODE, { store, log: new SecretMaskingLogger(this.options.logger) });
  }

  /**
   * A captive portal or a proxy answers the relay's address with a web page, or stops doing so. The
   * streams open now end as the portal takes over; publishes still reach the relay and are cached.
   */
  webPageInstead(on: boolean): void {
    this.relay.impersonate(on ? 'web-page' : undefined);
    if (on) {
      this.relay.dropStreams();
    }
  }

  /**
   * What the doorbell service's list says of a doorbell from now on (its battery, whether it can reach
   * it), set as a tester does: over HTTP, through the simulator's control API. No connection is kept
   * alive, so none is left in the count of what is held.
   */
  async setDoorbell(deviceId: string, health: DeviceHealth): Promise<void> {
    const url = new URL(`${CONTROL_PREFIX}doorbells/${deviceId}`, this.sim.doorbellUrl);
    const body = JSON.stringify(health);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const sent = request(url, { method: 'PUT', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
        response.on('error', reject);
      });
      sent.on('error', reject);
      sent.end(body);
    });
    if (status !== 200) {
      throw new Error(`the simulator's control API answered ${status} to ${body} for doorbell ${deviceId}`);
    }
  }

  /** The doorbell service answers 503 to every call of the plugin's, or stops doing so. */
  serviceUnavailable(down: boolean): void {
    if (down) {
      DOORBELL_ROUTES.forEach((route) => this.sim.injectFault(route, { status: 503, times: 1_000_000 }));
    } else {
      this.sim.clearFaults();
    }
  }

  /**
   * Before a count of what the plugin holds: keep-alive connections idle now are closed (so the sockets
   * left are those held on purpose), and the requests recorded so far forgotten (so the heap is not the
   * services' record of the week).
   */
  quiesce(): void {
    this.sim.closeIdleConnections();
    this.sim.reset();
    this.relay.reset();
  }

  async close(): Promise<void> {
    await this.home.close();
    await this.relay.close();
    await this.sim.close();
  }
}
