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
  /**
   * The e-mail (as the account was added) of the account the request acted for: the account a region
   * or login request names, or the one a doorbell request's bearer token was issued to (revoked or
   * not). Absent when the service could not tell, e.g. an unknown e-mail or token.
   */
  account?: string;
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

/** An account with, optionally, doorbells of its own; what `accounts` and `addAccount` take. */
export interface SimulatedAccountSetup extends SimulatedAccount {
  /**
   * The doorbells this account's tokens may subscribe (decimal ids); another id answers 404, another
   * account's doorbell included. A doorbell may be in several accounts' lists. Absent (and no
   * `devices`): the simulator's `doorbells` and `devices`, as every account had before accounts had
   * their own; with `devices` alone, any valid id.
   */
  doorbells?: string[];
  /** This account's device list; default: each of its `doorbells` as one of its own doorbells. */
  devices?: SimulatedDevice[];
}

/**
 * One account as the simulator holds it now: what `addAccount` answers and `accounts()` lists. A copy:
 * it does not change afterwards.
 */
export interface SimulatedAccountState {
  /** As the account was added (logins match it without regard to case). */
  email: string;
  /** Its current verification code (spent or not). */
  code: string;
  /** The doorbells it may subscribe, undefined when any valid id exists for it. */
  doorbells: readonly string[] | undefined;
  /** Session tokens issued to it by logins, in order, revoked ones included. */
  tokens: readonly string[];
  /** Those of `tokens` revoked since. */
  revokedTokens: readonly string[];
  /** The push token of its latest valid registration, if any: where its subscriptions are delivered. */
  pushToken: string | undefined;
  /** The doorbells it subscribed. */
  subscribedDoorbells: ReadonlySet<string>;
}

/** One delivery of a notification: to the push token of `account`, for one of its subscriptions. */
export interface AccountDelivery extends DeliveryResult {
  account: string;
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
  /**
   * Accounts known to the service; the first is the default account. Login with another e-mail
   * answers code 2008.
   */
  accounts?: SimulatedAccountSetup[];
  /**
   * Doorbell ids (decimal strings) of every account without doorbells of its own; subscribing to
   * another id answers 404. Absent: any valid id exists.
   */
  doorbells?: string[];
  /**
   * The device list of every account without one of its own. Default: each of `doorbells` as one of the account's own doorbells,
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
  /**
   * Adds an account, or replaces the one with the same e-mail, giving it a fresh, unspent code (its
   * sessions, registration and subscriptions stay, and its doorbells unless new ones are given).
   * Answers the account as it now is.
   */
  addAccount(account: SimulatedAccountSetup): SimulatedAccountState;
  /** Every account, in the order added; the first is the default account. */
  accounts(): SimulatedAccountState[];
  /** One account by e-mail, without regard to case. */
  account(email: string): SimulatedAccountState | undefined;
  /**
   * Revokes every session token issued to one account so far, as when the service ends its session;
   * other accounts' tokens keep working. Throws for an unknown e-mail.
   */
  revokeAccount(email: string): void;
  /** The recorded requests that acted for one account (`RecordedRequest.account`), in order. */
  requestsOf(email: string): RecordedRequest[];
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
  /** The push_notification_token of the latest valid registration of any account, if any. */
  readonly pushToken: string | undefined;
  /** Doorbell ids with a valid motion subscription of any account, as decimal strings. */
  readonly subscribedDoorbells: ReadonlySet<string>;
  /**
   * Delivers a notification as the push delivery service would: POST <pushToken> with Content-Type
   * application/json, once per subscription of the doorbell, each to the push token its account
   * registered last (a doorbell nobody subscribed: once, to the latest registration). Every delivery
   * carries the same body. Without `rawBody`, the flat motion shape
   * {"device_id":<id as a JSON integer, exact>,"kind":"motion","id":"<unique>","created_at":...};
   * `rawBody` replaces the whole body text. Answers the first delivery that was not a 2xx, else the
   * first. Rejects when nothing is registered.
   */
  deliverMotion(deviceId: string, options?: MotionOptions): Promise<DeliveryResult>;
  /** As deliverMotion, answering every delivery with the account it went to, in the order the accounts were added. */
  deliverMotionEach(deviceId: string, options?: MotionOptions): Promise<AccountDelivery[]>;
  /** Clears recorded requests (not accounts, tokens or registrations). */
  reset(): void;
  /**
   * Closes the connections clients keep alive between requests, as a server's idle timeout does: what
   * stays open after it is what a client holds open on purpose.
   */
  closeIdleConnections(): void;
  close(): Promise<void>;
}
