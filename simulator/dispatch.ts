import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROL_PREFIX } from './control-api.js';
import { faultAnswer } from './faults.js';
import type { FaultQueue } from './faults.js';
import { jsonReply, readIncoming, writeReply } from './incoming.js';
import type { Answer, IncomingRequest, Reply } from './incoming.js';
import type { Recorder } from './recorder.js';
import type { RouteContext } from './route-context.js';
import { matchRoute } from './router.js';
import type { RouteMatch } from './router.js';
import type { RecordedRequest, SimulatedService } from './types.js';

export interface DispatchContext {
  recorder: Recorder;
  faults: FaultQueue;
  routeContext(): RouteContext;
  /** How long after its arrival every recorded request is answered (SimulatorOptions.latencyMs). */
  latencyMs: number;
  /** Aborted when the simulator closes: pending fault delays end at once. */
  signal: AbortSignal;
  /** Answers the control API; only the doorbell server offers it. */
  control(request: IncomingRequest): Promise<Reply>;
}

export function createRequestHandler(service: SimulatedService, context: DispatchContext): RequestListener {
  return (message, response) => {
    // Last line of defence: whatever goes wrong, the simulator drops the connection rather than crash.
    handleRequest(service, message, response, context).catch(() => message.socket.destroy());
  };
}

async function handleRequest(service: SimulatedService, message: IncomingMessage, response: ServerResponse, context: DispatchContext): Promise<void> {
  let request: IncomingRequest;
  try {
    request = await readIncoming(service, message);
  } catch {
    return; // The client went away mid-body: nobody is left to answer.
  }
  if (service === 'doorbell' && request.path.startsWith(CONTROL_PREFIX)) {
    writeReply(response, await context.control(request));
    return;
  }
  const match = matchRoute(request);
  const entry = context.recorder.record(request, match.name);
  const answer = await answerRoute(match, entry, context);
  if (answer === 'reset') {
    message.socket.destroy();
    context.recorder.answered(entry, 0);
  } else {
    writeReply(response, answer);
    context.recorder.answered(entry, answer.status);
  }
}

/**
 * Faults replace the answer, never the judgement: the request is still checked and its problems
 * recorded, but the route's effects (spending a code, issuing a token) do not happen, as when a real
 * service fails before doing its work.
 */
async function answerRoute(match: RouteMatch, entry: RecordedRequest, context: DispatchContext): Promise<Answer> {
  try {
    const fault = match.served && match.name !== undefined ? context.faults.take(match.name, match.params[0]) : undefined;
    // The route's effects (a subscription recorded, a code spent) happen at answer time, as when a
    // distant service does its work before the answer travels back.
    const delayMs = context.latencyMs + (fault?.delayMs ?? 0);
    if (delayMs > 0) {
      await sleep(delayMs, undefined, { signal: context.signal });
    }
    const evaluation = match.evaluate(context.routeContext());
    entry.problems.push(...evaluation.problems);
    if (evaluation.account !== undefined) {
      entry.account = evaluation.account;
    }
    return (fault && faultAnswer(fault)) ?? evaluation.respond();
  } catch (error) {
    if (context.signal.aborted) {
      return 'reset';
    }
    // A simulator bug: recorded as a problem so that tests asserting no invalid requests fail loudly.
    entry.problems.push(`simulator error: ${String(error)}`);
    return jsonReply(500, { reason: 'simulator error' });
  }
}
