import type { IncomingRequest } from './incoming.js';
import type { RecordedRequest, RouteName } from './types.js';

export type RouteCounts = Record<RouteName | 'unrouted', number>;

/** The log of every request the three servers received, in arrival order. */
export class Recorder {
  readonly requests: RecordedRequest[] = [];

  constructor(private readonly onAnswered?: (request: RecordedRequest) => void) {}

  record(request: IncomingRequest, route: RouteName | undefined): RecordedRequest {
    const entry: RecordedRequest = {
      service: request.service,
      route,
      method: request.method,
      path: request.path,
      rawQuery: request.rawQuery,
      headers: { ...request.headers },
      body: request.body,
      status: 0,
      problems: [],
    };
    this.requests.push(entry);
    return entry;
  }

  /** Sets the status sent (0 for a reset) and tells the listener, if any. */
  answered(entry: RecordedRequest, status: number): void {
    entry.status = status;
    this.onAnswered?.(entry);
  }

  requestsTo(route: RouteName): RecordedRequest[] {
    return this.requests.filter((entry) => entry.route === route);
  }

  invalidRequests(): RecordedRequest[] {
    return this.requests.filter((entry) => entry.problems.length > 0);
  }

  /** How many of `requests` (default: all) each route received. */
  countsByRoute(requests: readonly RecordedRequest[] = this.requests): RouteCounts {
    const counts: RouteCounts = { region: 0, login: 0, register: 0, subscribe: 0, devices: 0, unrouted: 0 };
    for (const entry of requests) {
      counts[entry.route ?? 'unrouted'] += 1;
    }
    return counts;
  }

  /** Emptied in place: callers holding `requests` see the same array. */
  clear(): void {
    this.requests.length = 0;
  }
}
