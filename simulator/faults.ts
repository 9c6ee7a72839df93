import { serviceError } from './account-data.js';
import { ChaosFaults } from './chaos.js';
import { jsonReply } from './incoming.js';
import type { Answer } from './incoming.js';
import type { Chaos, Fault, RouteName } from './types.js';

/** Envelope codes exist only on the account service. */
const ENVELOPE_ROUTES: ReadonlySet<RouteName> = new Set(['region', 'login']);

/** A fault has at most one outcome; a bare delayMs only slows the normal answer down. */
const OUTCOMES = ['status', 'serviceCode', 'reset', 'rawBody'] as const;

/** Fields that mean nothing without their outcome. */
const COMPANIONS: ReadonlyArray<[keyof Fault, keyof Fault]> = [
  ['retryAfter', 'status'],
  ['msg', 'serviceCode'],
  ['contentType', 'rawBody'],
];

/** Refuses a fault that could not do what its author meant, so a test cannot pass by accident. */
function validateFault(route: RouteName, fault: Fault): void {
  const outcomes = OUTCOMES.filter((key) => fault[key] !== undefined && fault[key] !== false);
  const rules: Array<[boolean, string]> = [
    [outcomes.length > 1, `has more than one outcome (${outcomes.join(', ')})`],
    [outcomes.length === 0 && fault.delayMs === undefined, 'needs status, serviceCode, reset, rawBody or delayMs'],
    [fault.status !== undefined && !(Number.isInteger(fault.status) && fault.status >= 200 && fault.status <= 599), 'status must be 200-599'],
    [fault.serviceCode !== undefined && !ENVELOPE_ROUTES.has(route), 'serviceCode applies to the account routes only'],
    [fault.delayMs !== undefined && !(Number.isFinite(fault.delayMs) && fault.delayMs >= 0), 'delayMs must be a number >= 0'],
    [fault.times !== undefined && !(Number.isInteger(fault.times) && fault.times >= 1), 'times must be an integer >= 1'],
    [fault.deviceId !== undefined && route !== 'subscribe', 'deviceId applies to the subscribe route only'],
    ...COMPANIONS.map(([field, outcome]): [boolean, string] => [fault[field] !== undefined && fault[outcome] === undefined, `${field} needs ${outcome}`]),
  ];
  const broken = rules.filter(([isBroken]) => isBroken).map(([, message]) => message);
  if (broken.length > 0) {
    throw new TypeError(`fault for ${route} ${broken.join('; ')}`);
  }
}

interface PendingFault {
  fault: Fault;
  remaining: number;
}

/** Faults waiting for their route, applied in the order they were injected. */
export class FaultQueue {
  private readonly pending = new Map<RouteName, PendingFault[]>();
  private chaos: ChaosFaults | undefined;

  /** From now on, requests no injected fault applies to fail at random; undefined ends it. */
  setChaos(chaos: Chaos | undefined): void {
    this.chaos = chaos === undefined ? undefined : new ChaosFaults(chaos);
  }

  add(route: RouteName, fault: Fault): void {
    validateFault(route, fault);
    const queue = this.pending.get(route) ?? [];
    queue.push({ fault: { ...fault }, remaining: fault.times ?? 1 });
    this.pending.set(route, queue);
  }

  /**
   * The fault for the next request of `route` (for doorbell `deviceId` on the subscribe route),
   * spending one of its `times`: the oldest that applies to it.
   */
  take(route: RouteName, deviceId?: string): Fault | undefined {
    const queue = this.pending.get(route) ?? [];
    const index = queue.findIndex(({ fault }) => fault.deviceId === undefined || fault.deviceId === deviceId);
    const next = queue[index];
    if (next === undefined) {
      return this.chaos?.next();
    }
    next.remaining -= 1;
    if (next.remaining === 0) {
      queue.splice(index, 1);
    }
    return next.fault;
  }

  clear(): void {
    this.pending.clear();
    this.chaos = undefined;
  }
}

/** What the fault answers instead of the route; undefined when it only delays the normal answer. */
export function faultAnswer(fault: Fault): Answer | undefined {
  if (fault.reset) {
    return 'reset';
  }
  if (fault.status !== undefined) {
    const headers: Record<string, string> = fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter };
    return jsonReply(fault.status, { reason: `injected fault: HTTP ${fault.status}` }, headers);
  }
  if (fault.serviceCode !== undefined) {
    return serviceError(fault.serviceCode, fault.msg ?? 'injected service error');
  }
  if (fault.rawBody !== undefined) {
    return { status: 200, headers: { 'content-type': fault.contentType ?? 'application/json' }, body: fault.rawBody };
  }
  return undefined;
}
