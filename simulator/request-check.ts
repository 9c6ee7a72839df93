import { jsonReply } from './incoming.js';
import type { Reply } from './incoming.js';
import type { SimulatedService } from './types.js';

/** The envelope code the account service uses for a malformed request. */
const PARAMETER_ERROR = 1002;

export interface Refusal {
  status: number;
  reason: string;
  headers?: Record<string, string>;
}

/** A judged request: the rules it broke, and the reply (refusal or the route's effect) still to send. */
export interface Evaluation {
  readonly problems: readonly string[];
  /** The e-mail of the account the request acted for, when the service could tell. */
  readonly account?: string;
  respond(): Reply;
}

/**
 * Collects what the checks of one route conclude. A violation is a broken strictness rule: it is
 * recorded as a problem and refuses the request. A plain refusal is the service turning down a valid
 * request (an unknown or revoked token, an unknown doorbell): the client did nothing wrong, so tests
 * that assert "no invalid requests" still pass. The first refusal decides the status.
 */
export class RequestCheck {
  readonly problems: string[] = [];
  /** The e-mail of the account the request acted for: the one it names, or its bearer token's. */
  account: string | undefined;
  private refusal: Refusal | undefined;

  constructor(private readonly service: SimulatedService) {}

  violation(reason: string, status = 400, headers?: Record<string, string>): void {
    this.problems.push(reason);
    this.refuse(reason, status, headers);
  }

  refuse(reason: string, status: number, headers?: Record<string, string>): void {
    this.refusal ??= { status, reason, headers };
  }

  /** `accept` runs the route's effect; it is called only when nothing refused the request. */
  conclude(accept: () => Reply): Evaluation {
    const { refusal, problems, service, account } = this;
    return { problems, account, respond: () => (refusal ? refusalReply(service, refusal, problems) : accept()) };
  }
}

/** The account services answer in their {code, msg, data} envelope; the doorbell service in plain JSON. */
function refusalReply(service: SimulatedService, refusal: Refusal, problems: readonly string[]): Reply {
  const body =
    service === 'doorbell'
      ? { reason: refusal.reason, problems }
      : { code: refusal.status === 400 ? PARAMETER_ERROR : refusal.status, msg: refusal.reason, data: null, problems };
  return jsonReply(refusal.status, body, refusal.headers);
}

/** The evaluation of a request no route serves. */
export function refusedOutright(service: SimulatedService, refusal: Refusal): Evaluation {
  const problems = [refusal.reason];
  return { problems, respond: () => refusalReply(service, refusal, problems) };
}
