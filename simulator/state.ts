import { createIdentity, createSessionToken } from './account-data.js';
import type { AccountIdentity, AccountProfile } from './account-data.js';
import { ACCOUNT_FIELD_FORMATS, fieldFormatProblem, isDeviceIdText, isEmail } from './field-checks.js';
import { checkDevices, devicesOf } from './device-list.js';
import type { DeviceListMode, SimulatedAccount, SimulatedDevice } from './types.js';

interface AccountRecord {
  profile: AccountProfile;
  identity: AccountIdentity;
  /** Codes are one-time: a successful login spends it. */
  codeSpent: boolean;
}

export type LoginOutcome = { token: string; profile: AccountProfile; identity: AccountIdentity } | 'unknown account' | 'invalid code';

/** What both services remember between requests: accounts, sessions, registrations, subscriptions. */
export class ServiceState {
  readonly issuedTokens: string[] = [];
  readonly subscribedDoorbells = new Set<string>();
  private readonly accounts = new Map<string, AccountRecord>();
  private readonly revokedTokens = new Set<string>();
  private readonly pushTokensByBearer = new Map<string, string>();
  private readonly seenMercyKs = new Set<string>();
  private readonly doorbells: ReadonlySet<string> | undefined;
  private latestRegistration: string | undefined;
  private readonly registeredPushTokens = new Set<string>();
  /** The account's device list, and how its route answers. */
  readonly devices: SimulatedDevice[];
  deviceListMode: DeviceListMode;

  constructor(doorbells: readonly string[] | undefined, devices?: readonly SimulatedDevice[], deviceListMode: DeviceListMode = 'offered') {
    const invalid = doorbells?.find((id) => !isDeviceIdText(id));
    if (invalid !== undefined) {
      throw new TypeError(`doorbell id ${JSON.stringify(invalid)} must be a decimal from 1 to 9223372036854775807`);
    }
    this.doorbells = doorbells && new Set(doorbells);
    checkDevices(devices ?? []);
    this.devices = [...(devices ?? devicesOf(doorbells ?? []))];
    this.deviceListMode = deviceListMode;
  }

  /** Adds or replaces an account; replacing gives it a fresh, unspent code. */
  addAccount(account: SimulatedAccount): void {
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
    this.accounts.set(profile.email.toLowerCase(), { profile, identity: createIdentity(profile.email), codeSpent: false });
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
    return { token, profile: record.profile, identity: record.identity };
  }

  isActiveToken(token: string): boolean {
    return this.issuedTokens.includes(token) && !this.revokedTokens.has(token);
  }

  revokeToken(token: string): void {
    this.revokedTokens.add(token);
  }

  registerPushToken(bearer: string, pushToken: string): void {
    this.pushTokensByBearer.set(bearer, pushToken);
    this.registeredPushTokens.add(pushToken);
    this.latestRegistration = pushToken;
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

  get pushToken(): string | undefined {
    return this.latestRegistration;
  }

  /** Without a configured list every valid id exists. */
  doorbellExists(deviceId: string): boolean {
    return this.doorbells?.has(deviceId) ?? true;
  }

  /** Records an x-mercy-ks; false when it was seen before, i.e. a replayed request signature. */
  firstUseOfMercyKs(ks: string): boolean {
    const first = !this.seenMercyKs.has(ks);
    this.seenMercyKs.add(ks);
    return first;
  }
}
