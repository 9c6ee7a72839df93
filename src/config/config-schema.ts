import { readFileSync } from 'node:fs';
import type { FromSchema } from 'json-schema-to-ts';
import type { PlatformSchema } from './config-checks.generated.js';

/**
 * config.schema.json, the one statement of the settings: the Homebridge UI draws its form from it,
 * the plugin checks the block against it (schema-check.ts) and words each problem from it
 * (messages.ts), and the settings' types below are derived from it by json-schema-to-ts, through the
 * type `npm run validators` writes beside the compiled check.
 */

/** One place in the schema: the keywords the plugin reads at run time. */
export interface SchemaNode {
  type?: string;
  title?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  required?: string[];
  if?: { required?: string[] };
  then?: { required?: string[] };
  else?: { required?: string[] };
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  /** What the setting must be, in words, where its pattern cannot say it. */
  'x-must-be'?: string;
  /** `url`: an address, checked with the WHATWG URL parser (and refused with user:password@ in it). */
  'x-address'?: string;
}

/** From src/config/ in tests and from dist/config/ when installed, the schema is two folders up. */
const SCHEMA_FILE = new URL('../../config.schema.json', import.meta.url);

let loaded: WeakRef<SchemaNode> | undefined;

/**
 * The platform block's schema. Only the configuration check reads it, at launch: held weakly, it is
 * read again should a later check need it, rather than kept in Homebridge's memory for the whole run.
 */
export function platformSchema(): SchemaNode {
  const held = loaded?.deref();
  if (held !== undefined) {
    return held;
  }
  const schema = (JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as { schema: SchemaNode }).schema;
  loaded = new WeakRef(schema);
  return schema;
}

type AccountSchema = PlatformSchema['properties']['account'];

/**
 * An account block as the check leaves it: one that holds anything must hold the fields its `then`
 * requires, and an empty one is no account (parse-config.ts leaves it out).
 */
export type AccountSettings = FromSchema<Omit<AccountSchema, 'if' | 'then'> & AccountSchema['then']>;

/** The platform block as the check leaves it once valid: Ajv has filled in the schema's defaults. */
export type SchemaBlock = Omit<FromSchema<PlatformSchema>, 'account'> & { account?: AccountSettings };

export type SchemaDoorbell = SchemaBlock['doorbells'][number];

export type SchemaPush = SchemaBlock['push'];
