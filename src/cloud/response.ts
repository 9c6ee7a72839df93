import { Ajv, type SchemaObject } from 'ajv';

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

export const ajv = new Ajv();

/** JSON schema of a field; every field is optional, present ones must have the type. */
export const field = {
  string: { type: 'string' },
  integer: { type: 'integer' },
  object: (properties: Record<string, SchemaObject>): SchemaObject => ({ type: 'object', properties }),
} as const;

export function envelopeSchema(dataProperties: Record<string, SchemaObject>): SchemaObject {
  return {
    type: 'object',
    properties: {
      code: field.integer,
      msg: field.string,
      data: { anyOf: [field.object(dataProperties), { type: 'null' }] },
    },
  };
}

const anyEnvelope = ajv.compile<Envelope<unknown>>(envelopeSchema({}));

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
