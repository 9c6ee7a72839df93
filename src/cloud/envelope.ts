import type { ErrorObject } from 'ajv';
import { isNonEmptyString } from '../values/json.js';
import { CloudError } from './errors.js';
import type { CompiledCheck } from './envelope-checks.generated.js';
import { parseJsonBody, type CloudResponse, type EnvelopeCheck } from './response.js';

/** How to read one operation's answer. */
export interface EnvelopeShape<T> {
  validate: EnvelopeCheck<T>;
  /** The string field of `data` the call cannot do without. */
  required: keyof T & string;
}

interface RequestName {
  method: string;
  path: string;
}

/**
 * How to read an answer, from its compiled check (envelope-checks.generated.js: an envelope whose
 * `data` has the properties envelope-schemas.ts names, all optional, any others allowed).
 */
export function envelopeShape<T>(compiled: CompiledCheck, required: keyof T & string): EnvelopeShape<T> {
  // The check is the schema's, and T is that schema's type, stated by hand next to it.
  return { validate: compiled as EnvelopeCheck<T>, required };
}

/**
 * The `data` of a successful answer. An envelope without the required field but with an integer
 * code is the service saying no; anything else that does not fit the shape is malformed.
 */
export function readEnvelopeData<T>(response: CloudResponse, request: RequestName, shape: EnvelopeShape<T>): T {
  const malformed = (detail: string): CloudError =>
    new CloudError({ kind: 'malformed', ...request, status: response.status, detail });
  const envelope = parseJsonBody(response);
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
