import { anyEnvelope as anyEnvelopeCheck, type CompiledCheck } from './envelope-checks.generated.js';

/** What a service answered, body as text, and how to read the `{code, msg, data}` envelope in it. */
export interface CloudResponse {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** The `{code, msg, data}` answer of the account service; other keys are tolerated at every level. */
export interface Envelope<T> {
  code?: number;
  msg?: string;
  /** Services put null here when they answer with an error code. */
  data?: T | null;
}

/**
 * A compiled check of an envelope (envelope-checks.generated.js, from envelope-schemas.ts): true
 * when it fits, otherwise Ajv's errors.
 */
export type EnvelopeCheck<T> = ((data: unknown) => data is Envelope<T>) & Pick<CompiledCheck, 'errors'>;

const anyEnvelope = anyEnvelopeCheck as EnvelopeCheck<unknown>;

/** The body as JSON; undefined when it is not JSON. */
export function parseJsonBody({ body }: CloudResponse): unknown {
  try {
    return JSON.parse(body);
  } catch {
    // The parser's message quotes the body, which may hold anything: say only that it is not JSON.
    return undefined;
  }
}

/** The service's code and msg when a body is a well-formed envelope with an integer code. */
export function readServiceAnswer(response: CloudResponse): { code: number; msg: string | undefined } | undefined {
  const envelope = parseJsonBody(response);
  if (!anyEnvelope(envelope) || envelope.code === undefined) {
    return undefined;
  }
  return { code: envelope.code, msg: envelope.msg };
}
