import { isDeviceIdText, requireExactShape } from './field-checks.js';
import type { Shape } from './field-checks.js';
import { requireBearer, requireMediaType, requireNoBody } from './http-checks.js';
import { deviceListBody } from './device-list.js';
import { emptyReply } from './incoming.js';
import type { IncomingRequest } from './incoming.js';
import type { RouteContext } from './route-context.js';
import { Verdict } from './verdict.js';
import type { Evaluation } from './verdict.js';

/** The doorbell service: push registration, motion subscription and the device list, all behind a bearer token. */

const REGISTRATION_SHAPE: Shape = {
  device: {
    metadata: { pn_dict_version: 'string', pn_service: 'string' },
    os: 'string',
    push_notification_token: 'string',
  },
};

/** PATCH /clients_api/device with exactly the registration shape; answers 204. */
export function evaluateRegister(request: IncomingRequest, context: RouteContext): Evaluation {
  const verdict = new Verdict(request.service);
  const bearer = requireBearer(verdict, request, (token) => context.state.isActiveToken(token));
  requireMediaType(verdict, request, 'application/json', 415);
  const pushToken = readPushToken(verdict, request.body);
  return verdict.conclude(() => {
    context.state.registerPushToken(bearer, pushToken);
    return emptyReply(204);
  });
}

/** The push_notification_token of a registration body that has exactly the expected shape. */
function readPushToken(verdict: Verdict, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    verdict.violation('body must be JSON');
    return '';
  }
  requireExactShape(verdict, parsed, REGISTRATION_SHAPE, 'body');
  const token = (parsed as { device?: { push_notification_token?: unknown } } | null)?.device?.push_notification_token;
  if (typeof token === 'string' && token !== '' && !isHttpUrl(token)) {
    verdict.violation('body.device.push_notification_token must be an absolute http(s) URL');
  }
  return typeof token === 'string' ? token : '';
}

function isHttpUrl(text: string): boolean {
  return URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol);
}

/** POST /clients_api/doorbots/{device_id}/motions_subscribe, no body, after a registration; answers 200. */
export function evaluateSubscribe(request: IncomingRequest, context: RouteContext, [deviceId]: readonly string[]): Evaluation {
  const { state } = context;
  const verdict = new Verdict(request.service);
  const bearer = requireBearer(verdict, request, (token) => state.isActiveToken(token));
  requireNoBody(verdict, request);
  if (!isDeviceIdText(deviceId)) {
    verdict.violation('device_id must be a decimal integer from 1 to 9223372036854775807');
  } else if (!state.doorbellExists(deviceId)) {
    // An unknown doorbell is the user's configuration, not a protocol error of the client.
    verdict.refuse(`no doorbell ${deviceId} on this account`, 404);
  }
  if (bearer !== '' && !state.hasPushToken(bearer)) {
    verdict.violation('register a push token (PATCH /clients_api/device) before subscribing');
  }
  return verdict.conclude(() => {
    state.subscribedDoorbells.add(deviceId);
    return emptyReply(200);
  });
}

/**
 * GET /clients_api/ring_devices, no body, no query: 200 with the account's device list, unless the
 * list's mode says this service does not offer it (404) or refuses every session (401).
 */
export function evaluateDeviceList(request: IncomingRequest, context: RouteContext): Evaluation {
  const { state } = context;
  const verdict = new Verdict(request.service);
  if (state.deviceListMode === 'not-offered') {
    // A service without the list knows nothing of the route: it answers before looking at the token.
    verdict.refuse(`no route ${request.method} ${request.path}`, 404);
  }
  requireBearer(verdict, request, (token) => state.isActiveToken(token) && state.deviceListMode !== 'unauthorized');
  requireNoBody(verdict, request);
  if (request.rawQuery !== '') {
    verdict.violation('the device list takes no query');
  }
  return verdict.conclude(() => ({ status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: deviceListBody(state.devices) }));
}
