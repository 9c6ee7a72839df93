import { createHash, randomInt } from 'node:crypto';
import { readEnvelopeData, type EnvelopeData, type Fields } from './envelope.js';
import { CloudHttp, type CloudHttpOptions, type CloudLogger } from './http.js';
import type { RetryPolicy } from './retry-policy.js';

/** Client headers the login requires; the service accepts one fixed value for each. */
const CLIENT_LANGUAGE = 'en';
export const APP_VERSION = '4.54.02';
export const PHONE_SYSTEM = 'Android';
export const PHONE_MODEL = 'Pixel 7';

export const REGION_PATH = '/api/v1/getUrlByEmail';
const LOGIN_PATH = '/api/v4/auth/email/login/code';

const MERCY_KS_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const MERCY_KS_LENGTH = 16;

/** What the region call's answer holds; `url` is the regional base address the login goes to. */
const REGION_FIELDS = { url: 'string', country: 'string', countrycode: 'string' } as const satisfies Fields;

/** What the login's answer holds; `token` is the doorbell service's bearer token. */
const LOGIN_FIELDS = {
  avatarurl: 'string',
  country: 'string',
  countrycode: 'string',
  nickname: 'string',
  region: 'string',
  rriot: { h: 'string', k: 'string', s: 'string', u: 'string', r: { a: 'string', l: 'string', m: 'string', r: 'string' } },
  rruid: 'string',
  token: 'string',
  tokentype: 'string',
  tuyaDeviceState: 'integer',
  uid: 'integer',
} as const satisfies Fields;

const REGION_SHAPE = { fields: REGION_FIELDS, required: 'url' } as const;

const LOGIN_SHAPE = { fields: LOGIN_FIELDS, required: 'token' } as const;

export type RegionInfo = EnvelopeData<typeof REGION_FIELDS, 'url'>;

/** The session a login grants, without the profile (avatarurl) and what nobody knows the use of. */
export type LoginResult = Omit<EnvelopeData<typeof LOGIN_FIELDS, 'token'>, 'avatarurl' | 'tuyaDeviceState'>;

export interface LoginParams {
  regionUrl: string;
  email: string;
  /** The six characters as the user gave them: leading zeros are part of the code. */
  code: string;
  country: string;
  countryCode: string;
  majorVersion: number;
  minorVersion: number;
}

export interface AccountClientOptions {
  serverUrl: string;
  /** header_clientid: stable for this installation and account. */
  clientId: string;
  logger?: CloudLogger;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
}

/** The account service: finds the account's region, then signs in there with a one-time code. */
export class AccountClient {
  private readonly account: CloudHttp;

  constructor(private readonly options: AccountClientOptions) {
    this.account = new CloudHttp(this.httpOptions(options.serverUrl));
  }

  async resolveRegion(email: string, options: { signal?: AbortSignal } = {}): Promise<RegionInfo> {
    const request = { method: 'POST', path: REGION_PATH } as const;
    const response = await this.account.send({
      ...request,
      query: new URLSearchParams({ email, needtwostepauth: 'false' }),
      carriesSecrets: false,
      signal: options.signal,
    });
    const { url, country, countrycode } = readEnvelopeData(response, request, REGION_SHAPE);
    return { url, country, countrycode };
  }

  /** Signs in at the regional address; the code is spent once the service has answered. */
  async loginWithCode(params: LoginParams, options: { signal?: AbortSignal } = {}): Promise<LoginResult> {
    const request = { method: 'POST', path: LOGIN_PATH } as const;
    const region = new CloudHttp(this.httpOptions(params.regionUrl));
    const response = await region.send({
      ...request,
      headers: () => this.loginHeaders(),
      body: new URLSearchParams({
        code: params.code,
        country: params.country,
        countryCode: params.countryCode,
        email: params.email,
        majorVersion: String(params.majorVersion),
        minorVersion: String(params.minorVersion),
      }),
      // The regional address comes from the region call's answer: the https rule holds for it too.
      carriesSecrets: true,
      signal: options.signal,
    });
    return toLoginResult(readEnvelopeData(response, request, LOGIN_SHAPE));
  }

  private httpOptions(baseUrl: string): CloudHttpOptions {
    const { logger, retry, timeoutMs } = this.options;
    return { baseUrl, logger, retry, timeoutMs, envelopes: true };
  }

  private loginHeaders(): Record<string, string> {
    const mercyKs = randomMercyKs();
    return {
      header_clientid: this.options.clientId,
      header_clientlang: CLIENT_LANGUAGE,
      'x-mercy-ks': mercyKs,
      'x-mercy-k': deriveMercyK(mercyKs),
      header_appversion: APP_VERSION,
      header_phonesystem: PHONE_SYSTEM,
      header_phonemodel: PHONE_MODEL,
    };
  }
}

/** 16 random letters and digits, drawn without modulo bias. */
function randomMercyKs(): string {
  return Array.from({ length: MERCY_KS_LENGTH }, () => MERCY_KS_ALPHABET[randomInt(MERCY_KS_ALPHABET.length)]).join('');
}

/** The service does not document the derivation; this project fixes it as the lowercase hex SHA-256 of x-mercy-ks (docs/cloud-protocol.md). */
function deriveMercyK(mercyKs: string): string {
  return createHash('sha256').update(mercyKs).digest('hex');
}

/** Keeps the session fields; the profile (avatarurl) and keys nobody knows are not the plugin's to store. */
function toLoginResult({ token, tokentype, rruid, rriot, uid, region, country, countrycode, nickname }: LoginResult): LoginResult {
  return { token, tokentype, rruid, rriot, uid, region, country, countrycode, nickname };
}
