import { Ajv, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv';
import { CloudError } from './errors.js';
import type { CloudResponse } from './http.js';

/** The `{code, msg, data}` answer of the account service; other keys are tolerated at every level. */
export interface Envelope<T> {
  code?: number;
  msg?: string;
  /** Services put null here when they answer with an error code. */
  data?: T | null;
}

/** How to read one operation's answer. */
export interface EnvelopeShape<T> {
  validate: ValidateFunction<Envelope<T>>;
  /** The string field of `data` the call cannot do without. */
  required: keyof T & string;
}

interface RequestName {
  method: string;
  path: string;
}

const ajv = new Ajv();

/** JSON schema of a field the seeds type; every field is optional, present ones must have the type. */
export const field = {
  string: { type: 'string' },
  integer: { type: 'integer' },
  object: (properties: Record<string, SchemaObject>): SchemaObject => ({ type: 'object', properties }),
} as const;

/** Compiles the check of an envelope whose `data` has these properties (all optional, any others allowed). */
export function envelopeShape<T>(dataProperties: Record<string, SchemaObject>, required: keyof T & string): EnvelopeShape<T> {
  return { validate: ajv.compile<Envelope<T>>(envelopeSchema(dataProperties)), required };
}

const anyEnvelope = ajv.compile<Envelope<unknown>>(envelopeSchema({}));

function envelopeSchema(dataProperties: Record<string, SchemaObject>): SchemaObject {
  return {
    type: 'object',
    properties: {
      code: field.integer,
      msg: field.string,
      data: { anyOf: [field.object(dataProperties), { type: 'null' }] },
    },
  };
}

/**
 * The `data` of a successful answer. An envelope without the required field but with an integer
 * code is the service saying no; anything else that does not fit the shape is malformed.
 */
export function readEnvelopeData<T>(response: CloudResponse, request: RequestName, shape: EnvelopeShape<T>): T {
  const malformed = (detail: string): CloudError =>
    new CloudError({ kind: 'malformed', ...request, status: response.status, detail });
  const envelope = parseJson(response);
  if (envelope === undefined) {
    throw malformed(describeNonJson(response));
  }
  if (!shape.validate(envelope)) {
    throw malformed(describeSchemaError(shape.validate.errors));
  }
  const data = envelope.data ?? undefined;
  if (data !== undefined && isNonEmptyString(data[shape.required])) {
    return data;
  }
  if (envelope.code !== undefined) {
    throw new CloudError({ kind: 'service', ...request, status: response.status, serviceCode: envelope.code, serviceMsg: envelope.msg });
  }
  throw malformed(`no data.${shape.required}`);
}

/** The service's code and msg when a body is a well-formed envelope with an integer code. */
export function readServiceAnswer(response: CloudResponse): { code: number; msg: string | undefined } | undefined {
  const envelope = parseJson(response);
  if (!anyEnvelope(envelope) || envelope.code === undefined) {
    return undefined;
  }
  return { code: envelope.code, msg: envelope.msg };
}

function parseJson({ body }: CloudResponse): unknown {
  try {
    return JSON.parse(body);
  } catch {
    // The parser's message quotes the body, which may hold anything: say only that it is not JSON.
    return undefined;
  }
}

function describeNonJson({ body, contentType }: CloudResponse): string {
  if (body.trim() === '') {
    return 'empty body';
  }
  return `body is not JSON${contentType === undefined ? '' : `, content type ${contentType.split(';')[0]}`}`;
}

/** Names the field and the expected type ("data.rriot.h must be string"), never the value. */
function describeSchemaError(errors: ErrorObject[] | null | undefined): string {
  const error = errors?.[0];
  if (error === undefined) {
    return 'unexpected shape';
  }
  const location = error.instancePath.split('/').filter((segment) => segment !== '').join('.');
  return `${location === '' ? 'the body' : location} ${error.message ?? 'is not as expected'}`;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}
