import { randomBytes, randomInt } from 'node:crypto';
import { jsonReply } from './incoming.js';
import type { Reply } from './incoming.js';

/**
 * What the account service answers. Every object carries keys no client knows, at every level, because
 * any object in the service's answers may grow additional properties and clients must tolerate them.
 */

export interface AccountProfile {
  email: string;
  code: string;
  country: string;
  countryCode: string;
}

/** The stable part of an account's login data; only the token is new on each login. */
export interface AccountIdentity {
  nickname: string;
  rruid: string;
  uid: number;
  rriot: { h: string; k: string; s: string; u: string };
}

const SUCCESS_CODE = 200;

function randomText(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

export function createIdentity(email: string): AccountIdentity {
  return {
    nickname: email.slice(0, email.indexOf('@')),
    rruid: `rr${randomBytes(8).toString('hex')}`,
    uid: randomInt(1_000_000, 2_000_000_000),
    rriot: { h: randomText(8), k: randomText(6), s: randomText(4), u: randomText(16) },
  };
}

export function createSessionToken(): string {
  return `rr${randomText(24)}`;
}

function withUnknownKeys<T extends object>(value: T, level: string): T & Record<string, unknown> {
  return { ...value, sim_unknown: { level, nested: { list: [1, 'two', null, true] } }, sim_flag: 0 };
}

function envelope(code: number, msg: string, data: object | null): Record<string, unknown> {
  return { code, msg, data };
}

/** A service error answers HTTP 200: the envelope code carries the failure. */
export function serviceError(code: number, msg: string): Reply {
  return jsonReply(200, envelope(code, msg, null));
}

export function regionReply(profile: AccountProfile, regionalUrl: string): Reply {
  const data = withUnknownKeys({ country: profile.country, countrycode: profile.countryCode, url: regionalUrl }, 'data');
  return jsonReply(200, withUnknownKeys(envelope(SUCCESS_CODE, 'success', data), 'top'));
}

export function loginReply(profile: AccountProfile, identity: AccountIdentity, token: string): Reply {
  const region = profile.country.toLowerCase();
  const endpoints = { a: `https://api-${region}.example.com`, l: `https://wood-${region}.example.com`, m: `ssl://mqtt-${region}.example.com:8883`, r: profile.country };
  const rriot = withUnknownKeys({ ...identity.rriot, r: withUnknownKeys(endpoints, 'rriot.r') }, 'rriot');
  const data = withUnknownKeys(
    {
      avatarurl: 'https://files.example.com/avatar/default.png',
      country: profile.country,
      countrycode: profile.countryCode,
      nickname: identity.nickname,
      region,
      rriot,
      rruid: identity.rruid,
      token,
      tokentype: '',
      tuyaDeviceState: 2,
      uid: identity.uid,
    },
    'data',
  );
  return jsonReply(200, withUnknownKeys(envelope(SUCCESS_CODE, 'success', data), 'top'));
}
