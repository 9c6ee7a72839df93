import { isNonEmptyString } from '../values/json.js';
import { CloudError } from './errors.js';

/** What a service answered: the body as text, and the envelope the services wrap their data in. */

/** What a service answered, body as text. */
export interface CloudResponse {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** The body as JSON; undefined when it is not JSON. */
export function parseJsonBody({ body }: CloudResponse): unknown {
  try {
    return JSON.parse(body);
  } catch {
    // The parser's message quotes the body, which may hold anything: say only that it is not JSON.
    return undefined;
  }
}

/**
 * The account service answers `{code, msg, data}`. What `data` may hold is written once, as fields,
 * and both the check of an answer and its type come from that: a field is a string, an integer or an
 * object of such fields. Every field may be missing, and keys nobody knows are allowed at every level.
 */
export type FieldKind = 'string' | 'integer' | Fields;

export interface Fields {
  readonly [name: string]: FieldKind;
}

/** The value `fields` describe. */
export type DataOf<F extends Fields> = {
  -readonly [K in keyof F]?: F[K] extends 'string' ? string : F[K] extends 'integer' ? number : F[K] extends Fields ? DataOf<F[K]> : never;
};

/** How to read one operation's answer: its fields, and the string field the call cannot do without. */
export interface EnvelopeShape<F extends Fields, R extends keyof F & string> {
  fields: F;
  required: R;
}

/** What a successful answer gives: its data, with the required field there and not empty. */
export type EnvelopeData<F extends Fields, R extends keyof F & string> = DataOf<F> & Record<R, string>;

/** The `{code, msg, data}` answer, data as `fields` describe it. */
export interface Envelope<T> {
  code?: number;
  msg?: string;
  /** Services put null here when they answer with an error code. */
  data?: T | null;
}

interface RequestName {
  method: string;
  path: string;
}

const ENVELOPE_FIELDS = { code: 'integer', msg: 'string' } as const satisfies Fields;

/**
 * Where `value` is not an envelope whose data fits `fields`, in words that name the first such field
 * and the type it must have ("data.rriot.h must be string"), never its value; undefined when it is one.
 */
function envelopeProblem(value: unknown, fields: Fields): string | undefined {
  if (!isObject(value)) {
    return 'the body must be object';
  }
  const data = value.data;
  if (data === null || data === undefined) {
    return fieldProblem(value, ENVELOPE_FIELDS, []);
  }
  return fieldProblem(value, ENVELOPE_FIELDS, []) ?? (isObject(data) ? fieldProblem(data, fields, ['data']) : 'data must be object');
}

/** Whether `value` is an envelope whose data fits `fields`. */
function isEnvelope<F extends Fields>(value: unknown, fields: F): value is Envelope<DataOf<F>> {
  return envelopeProblem(value, fields) === undefined;
}

/** The service's code and msg when a body is a well-formed envelope with an integer code. */
export function readServiceAnswer(response: CloudResponse): { code: number; msg: string | undefined } | undefined {
  const envelope = parseJsonBody(response);
  if (!isEnvelope(envelope, {}) || envelope.code === undefined) {
    return undefined;
  }
  return { code: envelope.code, msg: envelope.msg };
}

/**
 * The `data` of a successful answer. An envelope without the required field but with an integer
 * code is the service saying no; anything else that does not fit the shape is malformed.
 */
export function readEnvelopeData<F extends Fields, R extends keyof F & string>(
  response: CloudResponse,
  request: RequestName,
  shape: EnvelopeShape<F, R>,
): EnvelopeData<F, R> {
  const malformed = (detail: string): CloudError =>
    new CloudError({ kind: 'malformed', ...request, status: response.status, detail });
  const envelope = parseJsonBody(response);
  if (envelope === undefined) {
    throw malformed(describeNonJson(response));
  }
  const problem = envelopeProblem(envelope, shape.fields);
  if (problem !== undefined) {
    throw malformed(problem);
  }
  const { code, msg, data } = envelope as Envelope<DataOf<F>>;
  if (data !== null && data !== undefined && isNonEmptyString(data[shape.required])) {
    return data as EnvelopeData<F, R>;
  }
  if (code !== undefined) {
    throw new CloudError({ kind: 'service', ...request, status: response.status, serviceCode: code, serviceMsg: msg });
  }
  throw malformed(`no data.${shape.required}`);
}

/** In the order the fields are written, so the first problem named is always the same one. */
function fieldProblem(value: Record<string, unknown>, fields: Fields, at: readonly string[]): string | undefined {
  for (const [name, kind] of Object.entries(fields)) {
    const field = value[name];
    const path = [...at, name].join('.');
    if (field === undefined) {
      continue;
    }
    if (typeof kind === 'object') {
      const problem = isObject(field) ? fieldProblem(field, kind, [...at, name]) : `${path} must be object`;
      if (problem !== undefined) {
        return problem;
      }
    } else if (kind === 'string' ? typeof field !== 'string' : !Number.isInteger(field)) {
      return `${path} must be ${kind}`;
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeNonJson({ body, contentType }: CloudResponse): string {
  if (body.trim() === '') {
    return 'empty body';
  }
  return `body is not JSON${contentType === undefined ? '' : `, content type ${contentType.split(';')[0]}`}`;
}
