import { createIdentity, createSessionToken } from './account-data.js';
import type { AccountIdentity, AccountProfile } from './account-data.js';
import { ACCOUNT_FIELD_FORMATS, fieldFormatProblem, isDeviceIdText, isEmail } from './field-checks.js';
import { checkDevices, devicesOf } from './device-list.js';
import type { DeviceListMode, SimulatedAccountSetup, SimulatedAccountState, SimulatedDevice } from './types.js';

interface AccountRecord {
  profile: AccountProfile;
  identity: AccountIdentity;
  /** Codes are one-time: a successful login spends it. */
  codeSpent: boolean;
  /** The doorbells this account may subscribe; undefined: any valid id. */
  doorbells: ReadonlySet<string> | undefined;
  /** What its device list answers; the simulator's default list is shared by every account without one of its own. */
  devices: SimulatedDevice[];
  /** Session tokens issued to this account, in order. */
  tokens: string[];
  /** The push token of this account's latest valid registration: where its subscriptions are delivered. */
  pushToken: string | undefined;
  /** Doorbells this account subscribed, in order; one subscription per doorbell however often it subscribes. */
  subscriptions: Set<string>;
}

export type LoginOutcome = { token: string; profile: AccountProfile; identity: AccountIdentity } | 'unknown account' | 'invalid code';

/** Where a notification for one doorbell goes: one entry per subscription. */
export interface DeliveryTarget {
  /** The e-mail of the account the subscription (or registration) belongs to. */
  account: string;
  pushToken: string;
}

/** One account as tests and the control API see it. */
export type AccountSnapshot = SimulatedAccountState;

function checkDoorbellIds(doorbells: readonly string[] | undefined): void {
  const invalid = doorbells?.find((id) => !isDeviceIdText(id));
  if (invalid !== undefined) {
    throw new TypeError(`doorbell id ${JSON.stringify(invalid)} must be a decimal from 1 to 9223372036854775807`);
  }
}

/** What both services remember between requests: accounts, sessions, registrations, subscriptions. */
export class ServiceState {
  readonly issuedTokens: string[] = [];
  /** Every subscribed doorbell of every account, in the order first subscribed. */
  readonly subscribedDoorbells = new Set<string>();
  /** Keyed by the lower-cased e-mail, in the order added: the first is the default account. */
  private readonly accounts = new Map<string, AccountRecord>();
  private readonly tokenOwners = new Map<string, AccountRecord>();
  private readonly revokedTokens = new Set<string>();
  private readonly pushTokensByBearer = new Map<string, string>();
  private readonly seenMercyKs = new Set<string>();
  private readonly doorbells: ReadonlySet<string> | undefined;
  private latestRegistration: { pushToken: string; account: AccountRecord } | undefined;
  private readonly registeredPushTokens = new Set<string>();
  /** The default device list: that of every account added without doorbells or devices of its own. */
  readonly devices: SimulatedDevice[];
  deviceListMode: DeviceListMode;

  constructor(doorbells: readonly string[] | undefined, devices?: readonly SimulatedDevice[], deviceListMode: DeviceListMode = 'offered') {
    checkDoorbellIds(doorbells);
    this.doorbells = doorbells && new Set(doorbells);
    checkDevices(devices ?? []);
    this.devices = [...(devices ?? devicesOf(doorbells ?? []))];
    this.deviceListMode = deviceListMode;
  }

  /**
   * Adds an account, or replaces the profile of one with the same e-mail, giving it a fresh, unspent
   * code. A replaced account keeps its sessions, registration and subscriptions, and its doorbells
   * unless new ones are given. Without doorbells or devices of its own, a new account has the
   * simulator's default ones, as every account had before accounts had their own.
   */
  addAccount(account: SimulatedAccountSetup): AccountSnapshot {
    const profile: AccountProfile = {
      email: account.email,
      code: account.code,
      country: account.country ?? 'US',
      countryCode: account.countryCode ?? '1',
    };
    const problems = [
      isEmail(profile.email) ? undefined : 'email must be an e-mail address',
      ...ACCOUNT_FIELD_FORMATS.map(({ key, pattern, expectation }) => fieldFormatProblem(key, profile[key], pattern, expectation)),
    ];
    const problem = problems.find((candidate) => candidate !== undefined);
    if (problem !== undefined) {
      throw new TypeError(`simulated account ${profile.email}: ${problem}`);
    }
    checkDoorbellIds(account.doorbells);
    checkDevices(account.devices ?? []);
    const key = profile.email.toLowerCase();
    const existing = this.accounts.get(key);
    const ownList = account.doorbells !== undefined || account.devices !== undefined;
    const record: AccountRecord = {
      profile,
      identity: createIdentity(profile.email),
      codeSpent: false,
      doorbells: ownList ? account.doorbells && new Set(account.doorbells) : (existing?.doorbells ?? this.doorbells),
      devices: ownList ? [...(account.devices ?? devicesOf(account.doorbells ?? []))] : (existing?.devices ?? this.devices),
      tokens: existing?.tokens ?? [],
      pushToken: existing?.pushToken,
      subscriptions: existing?.subscriptions ?? new Set(),
    };
    if (existing === undefined) {
      this.accounts.set(key, record);
    } else {
      // Replaced in place, so the order of accounts (the first is the default) stays.
      Object.assign(existing, record);
    }
    return this.snapshot(existing ?? record);
  }

  /** E-mail addresses match case-insensitively, as account services do. */
  findAccount(email: string): AccountProfile | undefined {
    return this.accounts.get(email.toLowerCase())?.profile;
  }

  login(email: string, code: string): LoginOutcome {
    const record = this.accounts.get(email.toLowerCase());
    if (record === undefined) {
      return 'unknown account';
    }
    if (record.codeSpent || record.profile.code !== code) {
      return 'invalid code';
    }
    record.codeSpent = true;
    const token = createSessionToken();
    this.issuedTokens.push(token);
    record.tokens.push(token);
    this.tokenOwners.set(token, record);
    return { token, profile: record.profile, identity: record.identity };
  }

  isActiveToken(token: string): boolean {
    return this.tokenOwners.has(token) && !this.revokedTokens.has(token);
  }

  revokeToken(token: string): void {
    this.revokedTokens.add(token);
  }

  /** Revokes every session token of one account, leaving the others' alone; false for an unknown e-mail. */
  revokeAccountTokens(email: string): boolean {
    const record = this.accounts.get(email.toLowerCase());
    record?.tokens.forEach((token) => this.revokedTokens.add(token));
    return record !== undefined;
  }

  /** The e-mail of the account a session token was issued to. */
  accountOfToken(token: string): string | undefined {
    return this.tokenOwners.get(token)?.profile.email;
  }

  registerPushToken(bearer: string, pushToken: string): void {
    const account = this.tokenOwners.get(bearer);
    if (account === undefined) {
      return;
    }
    this.pushTokensByBearer.set(bearer, pushToken);
    this.registeredPushTokens.add(pushToken);
    account.pushToken = pushToken;
    this.latestRegistration = { pushToken, account };
  }

  /** Subscribes the bearer's account to a doorbell; subscribing again changes nothing. */
  subscribe(bearer: string, deviceId: string): void {
    this.tokenOwners.get(bearer)?.subscriptions.add(deviceId);
    this.subscribedDoorbells.add(deviceId);
  }

  /**
   * Every value handed out or entrusted that grants access: the accounts' codes, the session tokens and
   * rriot keys issued, and the capability part (the last path segment) of every registered push token.
   */
  get secrets(): string[] {
    const records = [...this.accounts.values()];
    return [
      ...records.map(({ profile }) => profile.code),
      ...this.issuedTokens,
      ...records.flatMap(({ identity }) => Object.values(identity.rriot)),
      ...[...this.registeredPushTokens].map((token) => new URL(token).pathname.split('/').filter(Boolean).at(-1) ?? token),
    ];
  }

  hasPushToken(bearer: string): boolean {
    return this.pushTokensByBearer.has(bearer);
  }

  /** The latest valid registration of any account. */
  get pushToken(): string | undefined {
    return this.latestRegistration?.pushToken;
  }

  /** Whether the bearer's account has this doorbell; without a list of its own, every valid id exists. */
  doorbellExists(bearer: string, deviceId: string): boolean {
    const doorbells = this.tokenOwners.get(bearer)?.doorbells ?? this.doorbells;
    return doorbells?.has(deviceId) ?? true;
  }

  /** The device list of the bearer's account. */
  devicesOf(bearer: string): readonly SimulatedDevice[] {
    return this.tokenOwners.get(bearer)?.devices ?? this.devices;
  }

  /** Every distinct device list: the default one and those of accounts with their own. */
  get deviceLists(): SimulatedDevice[][] {
    return [...new Set([this.devices, ...[...this.accounts.values()].map(({ devices }) => devices)])];
  }

  /**
   * Where a notification for `deviceId` goes: the push token of every account subscribed to it, in
   * the order the accounts were added. A doorbell nobody subscribed goes to the latest registration,
   * as the single-account simulator always did.
   */
  deliveryTargets(deviceId: string): DeliveryTarget[] {
    const subscribed = [...this.accounts.values()]
      .filter((record) => record.subscriptions.has(deviceId) && record.pushToken !== undefined)
      .map((record) => ({ account: record.profile.email, pushToken: record.pushToken as string }));
    if (subscribed.length > 0 || this.latestRegistration === undefined) {
      return subscribed;
    }
    return [{ account: this.latestRegistration.account.profile.email, pushToken: this.latestRegistration.pushToken }];
  }

  accountSnapshots(): AccountSnapshot[] {
    return [...this.accounts.values()].map((record) => this.snapshot(record));
  }

  accountSnapshot(email: string): AccountSnapshot | undefined {
    const record = this.accounts.get(email.toLowerCase());
    return record && this.snapshot(record);
  }

  private snapshot(record: AccountRecord): AccountSnapshot {
    return {
      email: record.profile.email,
      code: record.profile.code,
      doorbells: record.doorbells && [...record.doorbells],
      tokens: [...record.tokens],
      revokedTokens: record.tokens.filter((token) => this.revokedTokens.has(token)),
      pushToken: record.pushToken,
      subscribedDoorbells: new Set(record.subscriptions),
    };
  }

  /** Records an x-mercy-ks; false when it was seen before, i.e. a replayed request signature. */
  firstUseOfMercyKs(ks: string): boolean {
    const first = !this.seenMercyKs.has(ks);
    this.seenMercyKs.add(ks);
    return first;
  }
}
