import { readFileSync } from 'node:fs';
import type { FromSchema } from 'json-schema-to-ts';
import type { PlatformSchema } from './config-checks.generated.js';

/**
 * config.schema.json, the one statement of the settings: the Homebridge UI draws its form from it,
 * the plugin checks the block against it (schema-check.ts) and words each problem from it
 * (messages.ts), and the settings' types below are derived from it by json-schema-to-ts, through the
 * type `npm run validators` writes beside the compiled check.
 */

/** What an `if` asks: that keys are there, or that a key is not. */
export interface Condition {
  required?: string[];
  not?: { required?: string[] };
}

/** One place in the schema: the keywords the plugin reads at run time. */
export interface SchemaNode {
  type?: string;
  title?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  required?: string[];
  if?: Condition;
  /** The top-level shape's keys: required only when the block has no `accounts`. */
  then?: { required?: string[]; if?: Condition; else?: { required?: string[] } };
  else?: { required?: string[] };
  enum?: unknown[];
  default?: unknown;
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

type Properties = PlatformSchema['properties'];
type AccountSchema = Properties['account'];

/**
 * An account block as the check leaves it: one that holds anything must hold the fields its `then`
 * requires, and an empty one is no account (parse-config.ts leaves it out).
 */
export type AccountSettings = FromSchema<Omit<AccountSchema, 'if' | 'then'> & AccountSchema['then']>;

/** A doorbell entry as the check leaves it, the schema's defaults filled in. */
export type SchemaDoorbell = FromSchema<Properties['doorbells']>[number];

/** The keys of one account, at the top of the block or in an entry of `accounts`. */
type AccountKeys = 'account' | 'doorbellServerUrl' | 'doorbells';

/**
 * An entry of `accounts` as the check leaves it. Its doorbells may be absent: an account signed in
 * before its doorbells are added.
 */
export type SchemaAccountEntry = Omit<FromSchema<Properties['accounts']['items']>, AccountKeys> & {
  account?: AccountSettings;
  doorbellServerUrl: string;
  doorbells?: SchemaDoorbell[];
};

/**
 * The platform block as the check leaves it once valid: Ajv has filled in the schema's defaults. The
 * schema requires the top-level account keys only without `accounts` (an if/then the types do not
 * follow), so they are stated here as the top-level shape has them; a block with `accounts` has
 * none of them (parse-config.ts refuses both together).
 */
export type SchemaBlock = Omit<FromSchema<PlatformSchema>, AccountKeys | 'accounts'> & {
  account?: AccountSettings;
  doorbellServerUrl: string;
  doorbells: SchemaDoorbell[];
  accounts?: SchemaAccountEntry[];
};

export type SchemaPush = SchemaBlock['push'];
