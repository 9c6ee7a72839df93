import { isDeviceIdText, requireExactShape } from './field-checks.js';
import type { Shape } from './field-checks.js';
import { requireBearer, requireMediaType, requireNoBody } from './http-checks.js';
import { headerValues } from './incoming.js';
import { deviceListBody } from './device-list.js';
import { emptyReply } from './incoming.js';
import type { IncomingRequest } from './incoming.js';
import type { RouteContext } from './route-context.js';
import type { ServiceState } from './state.js';
import { RequestCheck } from './request-check.js';
import type { Evaluation } from './request-check.js';

/** The doorbell service: push registration, motion subscription and the device list, all behind a bearer token. */

/** The account a request's bearer token was issued to, revoked or not: the recorder files the request under it. */
function accountOfBearer(request: IncomingRequest, state: ServiceState): string | undefined {
  const values = headerValues(request, 'authorization');
  const token = values.length === 1 ? /^Bearer ([^\s]+)$/.exec(values[0])?.[1] : undefined;
  return token === undefined ? undefined : state.accountOfToken(token);
}

const REGISTRATION_SHAPE: Shape = {
  device: {
    metadata: { pn_dict_version: 'string', pn_service: 'string' },
    os: 'string',
    push_notification_token: 'string',
  },
};

/** PATCH /clients_api/device with exactly the registration shape; answers 204. */
export function evaluateRegister(request: IncomingRequest, context: RouteContext): Evaluation {
  const check = new RequestCheck(request.service);
  const bearer = requireBearer(check, request, (token) => context.state.isActiveToken(token));
  check.account = accountOfBearer(request, context.state);
  requireMediaType(check, request, 'application/json', 415);
  const pushToken = readPushToken(check, request.body);
  return check.conclude(() => {
    context.state.registerPushToken(bearer, pushToken);
    return emptyReply(204);
  });
}

/** The push_notification_token of a registration body that has exactly the expected shape. */
function readPushToken(check: RequestCheck, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    check.violation('body must be JSON');
    return '';
  }
  requireExactShape(check, parsed, REGISTRATION_SHAPE, 'body');
  const token = (parsed as { device?: { push_notification_token?: unknown } } | null)?.device?.push_notification_token;
  if (typeof token === 'string' && token !== '' && !isHttpUrl(token)) {
    check.violation('body.device.push_notification_token must be an absolute http(s) URL');
  }
  return typeof token === 'string' ? token : '';
}

function isHttpUrl(text: string): boolean {
  return URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol);
}

/** POST /clients_api/doorbots/{device_id}/motions_subscribe, no body, after a registration; answers 200. */
export function evaluateSubscribe(request: IncomingRequest, context: RouteContext, [deviceId]: readonly string[]): Evaluation {
  const { state } = context;
  const check = new RequestCheck(request.service);
  const bearer = requireBearer(check, request, (token) => state.isActiveToken(token));
  check.account = accountOfBearer(request, state);
  requireNoBody(check, request);
  if (!isDeviceIdText(deviceId)) {
    check.violation('device_id must be a decimal integer from 1 to 9223372036854775807');
  } else if (bearer !== '' && !state.doorbellExists(bearer, deviceId)) {
    // An unknown doorbell is the user's configuration, not a protocol error of the client. Another
    // account's doorbell gets the same answer: the service does not tell what other accounts hold.
    check.refuse(`no doorbell ${deviceId} on this account`, 404);
  }
  if (bearer !== '' && !state.hasPushToken(bearer)) {
    check.violation('register a push token (PATCH /clients_api/device) before subscribing');
  }
  return check.conclude(() => {
    state.subscribe(bearer, deviceId);
    return emptyReply(200);
  });
}

/**
 * GET /clients_api/ring_devices, no body, no query: 200 with the device list of the token's account, unless the
 * list's mode says this service does not offer it (404) or refuses every session (401).
 */
export function evaluateDeviceList(request: IncomingRequest, context: RouteContext): Evaluation {
  const { state } = context;
  const check = new RequestCheck(request.service);
  if (state.deviceListMode === 'not-offered') {
    // A service without the list knows nothing of the route: it answers before looking at the token.
    check.refuse(`no route ${request.method} ${request.path}`, 404);
  }
  const bearer = requireBearer(check, request, (token) => state.isActiveToken(token) && state.deviceListMode !== 'unauthorized');
  check.account = accountOfBearer(request, state);
  requireNoBody(check, request);
  if (request.rawQuery !== '') {
    check.violation('the device list takes no query');
  }
  return check.conclude(() => ({ status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: deviceListBody(state.devicesOf(bearer)) }));
}
