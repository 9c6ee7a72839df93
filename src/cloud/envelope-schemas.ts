import type { SchemaObject } from 'ajv';

/**
 * The JSON schemas of the account service's `{code, msg, data}` answers. They are compiled when the
 * code is written (`npm run validators`, into envelope-checks.generated.js), not when the plugin
 * starts: nothing at run time imports this file.
 */

/** JSON schema of a field; every field is optional, present ones must have the type. */
const field = {
  string: { type: 'string' },
  integer: { type: 'integer' },
  object: (properties: Record<string, SchemaObject>): SchemaObject => ({ type: 'object', properties }),
} as const;

/** An envelope whose `data` has these properties (all optional, any others allowed) or is null. */
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

/** Each is exported from the generated module under its name here. */
export const ENVELOPE_SCHEMAS: Readonly<Record<string, SchemaObject>> = {
  /** Any answer: what a refusal's code and message are read from. */
  anyEnvelope: envelopeSchema({}),
  regionEnvelope: envelopeSchema({ url: field.string, country: field.string, countrycode: field.string }),
  loginEnvelope: envelopeSchema({
    avatarurl: field.string,
    country: field.string,
    countrycode: field.string,
    nickname: field.string,
    region: field.string,
    rriot: field.object({
      h: field.string,
      k: field.string,
      s: field.string,
      u: field.string,
      r: field.object({ a: field.string, l: field.string, m: field.string, r: field.string }),
    }),
    rruid: field.string,
    token: field.string,
    tokentype: field.string,
    tuyaDeviceState: field.integer,
    uid: field.integer,
  }),
};
