/**
 * The public contract of the strict local simulator of the account and doorbell services.
 * Cloud tests, the demo (`npm start`) and the end-to-end suite all drive it through this surface.
 */

/** Which of the three loopback servers answered. The region server is the "regional address". */
export type SimulatedService = 'account' | 'region' | 'doorbell';

/** The routes faults can be injected into. */
export type RouteName = 'region' | 'login' | 'register' | 'subscribe' | 'devices';

export interface RecordedRequest {
  service: SimulatedService;
  /** The route it matched, or undefined for an unknown path. */
  route: RouteName | undefined;
  method: string;
  /** Path without the query string, as received (still percent-encoded). */
  path: string;
  /** The raw query string without '?', '' when absent. */
  rawQuery: string;
  /** Lower-cased header names as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The raw request body as text ('' when none). */
  body: string;
  /** The status the simulator answered with (0 when it reset the connection). */
  status: number;
  /** Every strictness rule the request broke; empty for a valid request. */
  problems: string[];
}

/** One injected fault; applied to the next `times` requests of its route (default 1). */
export interface Fault {
  /** Answer with this HTTP status instead (with a small JSON or empty body). */
  status?: number;
  /** Value of a Retry-After header sent with `status`. */
  retryAfter?: string;
  /** Answer HTTP 200 with this envelope error code (account routes only). */
  serviceCode?: number;
  /** msg sent with serviceCode. */
  msg?: string;
  /** Destroy the socket without answering. */
  reset?: boolean;
  /** Wait this long before answering (or before applying the other fault fields). */
  delayMs?: number;
  /** Answer 200 with this raw body and content type instead (malformed responses). */
  rawBody?: string;
  contentType?: string;
  times?: number;
  /** Subscribe route only: the fault applies to this doorbell's requests alone, the others pass by it. */
  deviceId?: string;
}

/** Random faults on every route, for a chaos run: how often, and reproducibly. */
export interface Chaos {
  /** The share of requests that fail, from 0 to 1. */
  probability: number;
  /** The same seed fails the same requests in the same ways. */
  seed: number;
  /** How long a stalled request waits before answering; longer than the client's timeout. Default 5 s. */
  stallMs?: number;
}

export interface SimulatedAccount {
  email: string;
  /** The verification code the login accepts (6 characters, leading zeros kept). */
  code: string;
  country?: string;
  countryCode?: string;
}

/** The lists of the device list's answer: the account's doorbells, those shared with it, cameras, chimes. */
export type DeviceListName = 'doorbots' | 'authorized_doorbots' | 'stickup_cams' | 'chimes';

/**
 * One entry of the account's device list (`GET /clients_api/ring_devices`). `id` is a decimal int64,
 * written into the JSON as an integer, digit for digit; `rawEntry` is an entry's JSON text as it is,
 * for entries a client must skip.
 */
export type SimulatedDevice =
  | ({ list: DeviceListName; id: string; description?: string; kind?: string } & DeviceHealth)
  | { list: DeviceListName; rawEntry: string };

/**
 * What the service says of a doorbell's health: `battery_life` written as given (a number, a decimal
 * string, null; absent: no key), and `alerts.connection` (default "online"; any string is written as is).
 */
export interface DeviceHealth {
  battery_life?: number | string | null;
  connection?: string;
}

/**
 * How the device list answers: the list (`offered`), 404 as a service without it (`not-offered`), or
 * 401 for every token, as when the service no longer accepts the session (`unauthorized`).
 */
export type DeviceListMode = 'offered' | 'not-offered' | 'unauthorized';

export interface SimulatorOptions {
  /** Bind address; loopback only. Default 127.0.0.1. */
  host?: string;
  /** Fixed ports; 0 or absent means an ephemeral port. */
  ports?: Partial<Record<SimulatedService, number>>;
  /** Accounts known to the service. Login with another e-mail answers code 2008. */
  accounts?: SimulatedAccount[];
  /** Doorbell ids (decimal strings) that exist; subscribing to another id answers 404. Absent: any valid id exists. */
  doorbells?: string[];
  /**
   * The account's device list. Default: each of `doorbells` as one of the account's own doorbells,
   * named `Doorbell <id>`; none without `doorbells`. `SAMPLE_DEVICES` has one of every kind of entry.
   */
  devices?: SimulatedDevice[];
  /** Default `offered`; setDeviceListMode changes it. */
  deviceListMode?: DeviceListMode;
  /**
   * What the region call answers as data.url; default the region server's own URL. Tests of the
   * https-only rule set it to a non-loopback http:// address.
   */
  regionUrlOverride?: string;
  /**
   * A fixed round trip for every request the servers record (all but the control API), in
   * milliseconds: each is answered this long after it arrived, as a distant service would be
   * (`npm run bench` uses 100). Injected delays add to it. Default 0.
   */
  latencyMs?: number;
  /**
   * Called with each recorded request once it is answered (status set, 0 for a reset); the command-line
   * simulator prints them. Control API requests are not recorded, so never reported.
   */
  onRequest?: (request: RecordedRequest) => void;
}

/** What Simulator.deliverMotion sends besides the device id. */
export interface MotionOptions {
  id?: string;
  kind?: string;
  /** What the motion saw, as the service names it (`human`, `vehicle`, `package_delivery`, `animal`...), sent beside `kind`: any string is passed on. */
  subtype?: string;
  rawBody?: string;
}

export interface DeliveryResult {
  /** HTTP status the push receiver answered, or 0 when it could not be reached. */
  status: number;
  body: string;
}

export interface Simulator {
  readonly accountUrl: string;
  readonly regionUrl: string;
  readonly doorbellUrl: string;
  /** Every request received by any of the three servers, in order. */
  readonly requests: RecordedRequest[];
  /** Requests of one route, in order. */
  requestsTo(route: RouteName): RecordedRequest[];
  /** Requests that broke a strictness rule; tests assert this is empty. */
  invalidRequests(): RecordedRequest[];
  addAccount(account: SimulatedAccount): void;
  injectFault(route: RouteName, fault: Fault): void;
  /**
   * Fails requests of every route at random from now on, as a chaos run wants: a 503, a reset, a
   * stall, a 429 with Retry-After. Injected faults still come first. clearFaults() ends it.
   */
  injectChaos(chaos: Chaos): void;
  /** Forgets injected faults and ends chaos. */
  clearFaults(): void;
  /** Tokens issued by successful logins (the valid bearer tokens), in order. */
  readonly issuedTokens: readonly string[];
  /**
   * Every value that grants access and so must never reach a log line: the accounts' verification
   * codes, the session tokens and rriot keys it issued, and the secret part of each push token
   * registered with it. Tests take the secrets from here, as they went over the wire.
   */
  readonly secrets: readonly string[];
  /** From now on, the device list answers as `mode` says. */
  setDeviceListMode(mode: DeviceListMode): void;
  /** What the device list says of a listed doorbell's battery and connection from now on; throws for one it does not hold. */
  setDoorbellHealth(deviceId: string, health: DeviceHealth): void;
  /** Makes a bearer token invalid: the doorbell routes then answer 401 for it. */
  revokeToken(token: string): void;
  /** The push_notification_token of the latest valid registration, if any. */
  readonly pushToken: string | undefined;
  /** Doorbell ids with a valid motion subscription, as decimal strings. */
  readonly subscribedDoorbells: ReadonlySet<string>;
  /**
   * Delivers a notification to the registered push token as the push delivery service would:
   * POST <pushToken> with Content-Type application/json. Without `body`, sends the flat motion
   * shape {"device_id":<id as a JSON integer, exact>,"kind":"motion","id":"<unique>","created_at":...}.
   * `rawBody` replaces the whole body text. Rejects when nothing is registered.
   */
  deliverMotion(deviceId: string, options?: MotionOptions): Promise<DeliveryResult>;
  /** Clears recorded requests (not accounts, tokens or registrations). */
  reset(): void;
  /**
   * Closes the connections clients keep alive between requests, as a server's idle timeout does: what
   * stays open after it is what a client holds open on purpose.
   */
  closeIdleConnections(): void;
  close(): Promise<void>;
}
