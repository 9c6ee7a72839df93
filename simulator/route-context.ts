import type { Evaluation } from './request-check.js';
import type { IncomingRequest } from './incoming.js';
import type { ServiceState } from './state.js';

/** What a route's checks and effects may use. */
export interface RouteContext {
  state: ServiceState;
  /** What the region call hands out as data.url. */
  regionalUrl: string;
}

/** Judges one request; `params` are the path segments the route's pattern captured. */
export type RouteEvaluator = (request: IncomingRequest, context: RouteContext, params: readonly string[]) => Evaluation;
