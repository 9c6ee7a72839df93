import { DeliveryError } from './delivery.js';
import type { DeliveryFailure } from './delivery.js';
import { jsonReply } from './incoming.js';
import type { IncomingRequest, Reply } from './incoming.js';
import { isLoopbackAddress } from './loopback.js';
import type { RouteCounts } from './recorder.js';
import { DeviceNotListed } from './device-list.js';
import { randomInt } from 'node:crypto';
import { leadingResult } from './delivery.js';
import { UnknownAccount } from './unknown-account.js';
import type { AccountDelivery, DeviceHealth, DeviceListMode, MotionOptions, SimulatedAccountSetup, SimulatedAccountState } from './types.js';

/**
 * The control API lets another process (the demo, an end-to-end test) drive a running simulator:
 *   POST /__simulator/motion/<deviceId>  optional JSON body {"id","kind","subtype","rawBody"} (strings);
 *                                        delivers once per subscription of the doorbell; answers
 *                                        {status, body} as deliverMotion does and {deliveries}: each
 *                                        {account, status, body}
 *   GET  /__simulator/state              answers ControlState
 *   PUT  /__simulator/device-list        body {"mode": "offered" | "not-offered" | "unauthorized"}:
 *                                        how the device list answers from now on; answers ControlState
 *   PUT  /__simulator/doorbells/<deviceId>  body {"battery_life"?: number | string | null,
 *                                        "connection"?: "online" | "offline"}: what the device list says
 *                                        of that doorbell from now on (a key left out stays); answers
 *                                        ControlState, 404 for a doorbell the list does not hold
 *   GET  /__simulator/accounts           answers {accounts: ControlAccountState[]}
 *   POST /__simulator/accounts           body {"email", "code"?, "country"?, "countryCode"?, "doorbells"?}:
 *                                        adds (or replaces) an account; answers {email, code, doorbells}
 *   POST /__simulator/accounts/<e-mail>/revoke  revokes every session token of that account; answers
 *                                        {accounts}, 404 for an unknown e-mail
 */

/** Requests under this path are the tester's, answered only by the doorbell server and never recorded. */
export const CONTROL_PREFIX = '/__simulator/';

export interface ControlState {
  /** Only the origin is shown: the rest of a push token is the receiver's secret. */
  pushToken: string | null;
  subscribedDoorbells: string[];
  deviceListMode: DeviceListMode;
  requestCounts: RouteCounts;
  invalidRequests: number;
}

/**
 * One account as the control API shows it: never a token or code, the push token only as its origin.
 * `doorbells` null: any valid id exists for it.
 */
export interface ControlAccountState {
  email: string;
  doorbells: string[] | null;
  /** Session tokens issued to it and still valid. */
  sessions: number;
  revokedSessions: number;
  pushToken: string | null;
  subscribedDoorbells: string[];
  /** The requests that acted for it, by route. */
  requestCounts: RouteCounts;
}

export interface ControlTarget {
  deliverMotionEach(deviceId: string, options: MotionOptions): Promise<AccountDelivery[]>;
  controlState(): ControlState;
  accountsState(): ControlAccountState[];
  addAccount(account: SimulatedAccountSetup): SimulatedAccountState;
  /** Throws UnknownAccount for an e-mail the simulator does not hold. */
  revokeAccount(email: string): void;
  setDeviceListMode(mode: DeviceListMode): void;
  /** Throws DeviceNotListed for a doorbell the list does not hold. */
  setDoorbellHealth(deviceId: string, health: DeviceHealth): void;
}

const DEVICE_LIST_MODES: readonly DeviceListMode[] = ['offered', 'not-offered', 'unauthorized'];

const FAILURE_STATUS: Record<DeliveryFailure, number> = {
  'no-push-token': 409,
  'not-loopback': 403,
  'bad-device-id': 400,
};

export function maskPushToken(pushToken: string | undefined): string | null {
  return pushToken === undefined ? null : `${new URL(pushToken).origin}/***`;
}

export async function answerControl(request: IncomingRequest, target: ControlTarget): Promise<Reply> {
  if (!isLoopbackAddress(request.remoteAddress)) {
    return jsonReply(403, { reason: 'the control API answers loopback clients only' });
  }
  const route = request.path.slice(CONTROL_PREFIX.length);
  const motion = /^motion\/([^/]+)$/.exec(route);
  if (motion) {
    return request.method === 'POST' ? deliverFromControl(request.body, motion[1], target) : wrongMethod('POST');
  }
  if (route === 'state') {
    return request.method === 'GET' ? jsonReply(200, target.controlState()) : wrongMethod('GET');
  }
  if (route === 'device-list') {
    return request.method === 'PUT' ? setDeviceListMode(request.body, target) : wrongMethod('PUT');
  }
  const doorbell = /^doorbells\/(\d+)$/.exec(route);
  if (doorbell) {
    return request.method === 'PUT' ? setDoorbellHealth(request.body, doorbell[1], target) : wrongMethod('PUT');
  }
  if (route === 'accounts') {
    return answerAccounts(request, target);
  }
  const revoke = /^accounts\/([^/]+)\/revoke$/.exec(route);
  if (revoke) {
    return request.method === 'POST' ? revokeAccount(revoke[1], target) : wrongMethod('POST');
  }
  return jsonReply(404, { reason: `no control route ${request.path}` });
}

function answerAccounts(request: IncomingRequest, target: ControlTarget): Reply {
  if (request.method === 'GET') {
    return jsonReply(200, { accounts: target.accountsState() });
  }
  if (request.method !== 'POST') {
    return jsonReply(405, { reason: 'use GET or POST' }, { allow: 'GET, POST' });
  }
  const account = parseAccount(request.body);
  if (account === undefined) {
    return jsonReply(400, {
      reason: 'body must be a JSON object with a string "email", and optional strings "code", "country", "countryCode" and an array of decimal strings "doorbells"',
    });
  }
  try {
    const added = target.addAccount(account);
    return jsonReply(200, { email: added.email, code: added.code, doorbells: added.doorbells ?? null });
  } catch (error) {
    if (error instanceof TypeError) {
      return jsonReply(400, { reason: error.message });
    }
    throw error;
  }
}

/** Six random digits, leading zeros kept, for an account added without a code. */
function newCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

function parseAccount(body: string): SimulatedAccountSetup | undefined {
  const parsed = parseObject(body);
  if (parsed === undefined || !Object.keys(parsed).every((key) => ['email', 'code', 'country', 'countryCode', 'doorbells'].includes(key))) {
    return undefined;
  }
  const { email, code = newCode(), country, countryCode, doorbells } = parsed;
  const strings = [email, code].every((value) => typeof value === 'string') && [country, countryCode].every((value) => value === undefined || typeof value === 'string');
  const doorbellsOk = doorbells === undefined || (Array.isArray(doorbells) && doorbells.every((id) => typeof id === 'string'));
  if (!strings || !doorbellsOk) {
    return undefined;
  }
  return { ...(parsed as unknown as SimulatedAccountSetup), code: code as string };
}

function revokeAccount(encodedEmail: string, target: ControlTarget): Reply {
  let email: string;
  try {
    email = decodeURIComponent(encodedEmail);
  } catch {
    return jsonReply(400, { reason: 'the e-mail in the path has broken percent-encoding' });
  }
  try {
    target.revokeAccount(email);
  } catch (error) {
    if (error instanceof UnknownAccount) {
      return jsonReply(404, { reason: error.message });
    }
    throw error;
  }
  return jsonReply(200, { accounts: target.accountsState() });
}

function wrongMethod(allowed: string): Reply {
  return jsonReply(405, { reason: `use ${allowed}` }, { allow: allowed });
}

async function deliverFromControl(body: string, deviceId: string, target: ControlTarget): Promise<Reply> {
  const options = parseMotionOptions(body);
  if (options === undefined) {
    return jsonReply(400, { reason: 'body must be empty or a JSON object with optional string id, kind, subtype, rawBody' });
  }
  try {
    const deliveries = await target.deliverMotionEach(deviceId, options);
    return jsonReply(200, { ...leadingResult(deliveries), deliveries });
  } catch (error) {
    if (error instanceof DeliveryError) {
      return jsonReply(FAILURE_STATUS[error.failure], { reason: error.message });
    }
    return jsonReply(500, { reason: `delivery failed: ${String(error)}` });
  }
}

function setDeviceListMode(body: string, target: ControlTarget): Reply {
  const mode = parseObject(body)?.mode;
  if (!DEVICE_LIST_MODES.includes(mode as DeviceListMode)) {
    return jsonReply(400, { reason: `body must be {"mode": ${DEVICE_LIST_MODES.map((name) => JSON.stringify(name)).join(' | ')}}` });
  }
  target.setDeviceListMode(mode as DeviceListMode);
  return jsonReply(200, target.controlState());
}

function setDoorbellHealth(body: string, deviceId: string, target: ControlTarget): Reply {
  const health = parseHealth(body);
  if (health === undefined) {
    return jsonReply(400, { reason: 'body must be a JSON object with optional "battery_life" (number, string or null) and "connection" ("online" or "offline")' });
  }
  try {
    target.setDoorbellHealth(deviceId, health);
  } catch (error) {
    if (error instanceof DeviceNotListed) {
      return jsonReply(404, { reason: error.message });
    }
    throw error;
  }
  return jsonReply(200, target.controlState());
}

function parseHealth(body: string): DeviceHealth | undefined {
  const parsed = parseObject(body);
  if (parsed === undefined || !Object.keys(parsed).every((key) => key === 'battery_life' || key === 'connection')) {
    return undefined;
  }
  const { battery_life: battery, connection } = parsed;
  const batteryOk = battery === undefined || battery === null || typeof battery === 'number' || typeof battery === 'string';
  const connectionOk = connection === undefined || connection === 'online' || connection === 'offline';
  return batteryOk && connectionOk ? (parsed as DeviceHealth) : undefined;
}

/** A JSON object's entries; undefined for anything else. */
function parseObject(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function parseMotionOptions(body: string): MotionOptions | undefined {
  if (body === '') {
    return {};
  }
  const parsed = parseObject(body);
  if (parsed === undefined) {
    return undefined;
  }
  const entries = Object.entries(parsed);
  const valid = entries.every(([key, value]) => ['id', 'kind', 'subtype', 'rawBody'].includes(key) && typeof value === 'string');
  return valid ? Object.fromEntries(entries) : undefined;
}
