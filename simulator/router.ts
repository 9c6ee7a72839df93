import { evaluateLogin, evaluateRegion } from './account-routes.js';
import { evaluateDeviceList, evaluateRegister, evaluateSubscribe } from './doorbell-routes.js';
import type { IncomingRequest } from './incoming.js';
import type { RouteContext, RouteEvaluator } from './route-context.js';
import type { RouteName, SimulatedService } from './types.js';
import { refusedOutright } from './request-check.js';
import type { Evaluation, Refusal } from './request-check.js';

interface Route {
  name: RouteName;
  /** The only server that serves it: login sent to the account server is a client bug. */
  service: SimulatedService;
  method: string;
  pattern: RegExp;
  evaluate: RouteEvaluator;
}

const ROUTES: readonly Route[] = [
  { name: 'region', service: 'account', method: 'POST', pattern: /^\/api\/v1\/getUrlByEmail$/, evaluate: evaluateRegion },
  { name: 'login', service: 'region', method: 'POST', pattern: /^\/api\/v4\/auth\/email\/login\/code$/, evaluate: evaluateLogin },
  { name: 'register', service: 'doorbell', method: 'PATCH', pattern: /^\/clients_api\/device$/, evaluate: evaluateRegister },
  {
    name: 'subscribe',
    service: 'doorbell',
    method: 'POST',
    pattern: /^\/clients_api\/doorbots\/([^/]*)\/motions_subscribe$/,
    evaluate: evaluateSubscribe,
  },
  { name: 'devices', service: 'doorbell', method: 'GET', pattern: /^\/clients_api\/ring_devices$/, evaluate: evaluateDeviceList },
];

const SERVER_NAMES: Record<SimulatedService, string> = {
  account: 'account server (the account base address)',
  region: 'regional server (the data.url of the region call)',
  doorbell: 'doorbell server',
};

export interface RouteMatch {
  /** The route the path names, also when sent to the wrong server or with the wrong method. */
  name: RouteName | undefined;
  /** True when this server serves the route with this method: only then do faults apply. */
  served: boolean;
  /** What the route's pattern captured from the path (the device id of a subscription). */
  params: readonly string[];
  evaluate(context: RouteContext): Evaluation;
}

/** A body over the size limit never reaches a route. */
const TOO_LARGE: Refusal = { status: 413, reason: 'request body larger than 64 KiB' };

/** The route whose pattern matches the path, with the pattern's captured groups. */
function findRoute(path: string): { route: Route; params: string[] } | undefined {
  for (const route of ROUTES) {
    const match = route.pattern.exec(path);
    if (match) {
      return { route, params: match.slice(1) };
    }
  }
  return undefined;
}

export function matchRoute(request: IncomingRequest): RouteMatch {
  const found = findRoute(request.path);
  const route = found?.route;
  const served = route !== undefined && route.service === request.service && route.method === request.method;
  return {
    name: route?.name,
    served,
    params: found?.params ?? [],
    evaluate: (context) => {
      if (request.bodyTooLarge) {
        return refusedOutright(request.service, TOO_LARGE);
      }
      if (!served) {
        return refusedOutright(request.service, misrouted(request, route));
      }
      return route.evaluate(request, context, found?.params ?? []);
    },
  };
}

function misrouted(request: IncomingRequest, route: Route | undefined): Refusal {
  const { method, path, service } = request;
  if (route === undefined) {
    return { status: 404, reason: `no route ${method} ${path} on the ${SERVER_NAMES[service]}` };
  }
  if (route.service !== service) {
    return { status: 404, reason: `${path} belongs on the ${SERVER_NAMES[route.service]}, not the ${SERVER_NAMES[service]}` };
  }
  return { status: 405, reason: `${path} accepts ${route.method} only`, headers: { allow: route.method } };
}
