/**
 * The plugin's schema checks, compiled by Ajv when the code is written rather than at every start of
 * the plugin (Ajv's standalone code): the platform block and the account block against
 * config.schema.json, the one statement of the config's shape, which the Homebridge UI draws its form
 * from too; the account service's answers against src/cloud/envelope-schemas.ts; status.json against
 * src/status/status-schema.ts.
 *
 * `npm run validators` writes the modules; test/validators.test.ts generates them again and fails
 * when what is in the repository differs, so a schema changed without them cannot go unnoticed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { _, Ajv, Name, type CodeKeywordDefinition, type Options, type SchemaObject } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import { ENVELOPE_SCHEMAS } from '../../src/cloud/envelope-schemas.js';
import { STATUS_SCHEMA } from '../../src/status/status-schema.js';
import { isListenAddress, isWebAddress } from '../../src/values/address.js';
import { isTimestamp } from '../../src/values/time.js';
import { REPO_ROOT } from './paths.js';

/** Keywords the Homebridge UI reads from the schema to draw the form; they validate nothing. */
export const UI_KEYWORDS = ['placeholder', 'condition', 'functionBody', 'titleMap', 'x-schema-form'];

/** The checks the `x-address` keyword names, by the names the generated module imports them under. */
const ADDRESS_CHECKS = { url: { name: 'isWebAddress', check: isWebAddress }, listen: { name: 'isListenAddress', check: isListenAddress } };
const ADDRESS_PRELUDE = [`import { ${Object.values(ADDRESS_CHECKS).map(({ name }) => name).sort().join(', ')} } from '../values/address.js';`];

/**
 * `"x-address": "url"` or `"listen"` on a string setting: what a pattern cannot say about an address
 * (see src/values/address.ts). The Homebridge UI's form ignores keywords it does not know, and still
 * shows the pattern's hint; here the address is checked by the parser later steps use. The compiled
 * code calls the function by its name, which the generated module imports.
 */
export const ADDRESS_KEYWORD: CodeKeywordDefinition = {
  keyword: 'x-address',
  type: 'string',
  schemaType: 'string',
  metaSchema: { enum: Object.keys(ADDRESS_CHECKS) },
  code(cxt) {
    const { name, check } = ADDRESS_CHECKS[cxt.schema as keyof typeof ADDRESS_CHECKS];
    const compiled = cxt.gen.scopeValue('func', { ref: check, code: _`${new Name(name)}` });
    cxt.fail(_`!${compiled}(${cxt.data})`);
  },
};

/**
 * Strict mode stays on so that a misspelt keyword in the schema fails instead of silently checking
 * nothing. strictRequired is the exception: the "account unless doorbellAccessToken" rule is an
 * if/else whose `required` names properties declared one level up. useDefaults fills in the schema's
 * defaults, so each is written once, where the UI shows it too.
 */
export const CONFIG_OPTIONS: Options = { allErrors: true, useDefaults: true, strict: true, strictRequired: false };

/** An Ajv that reads config.schema.json as the plugin does: its options and the two kinds of extra keywords. */
export function configAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ ...CONFIG_OPTIONS, ...options });
  ajv.addVocabulary(UI_KEYWORDS);
  ajv.addKeyword(ADDRESS_KEYWORD);
  return ajv;
}

/** A CommonJS module seen from an ES module: its function is the default export's `default` too. */
const standaloneCode = standalone.default;

/** What the generated code is written with: ES module exports, one statement a line. */
const STANDALONE: Options = { code: { source: true, esm: true, lines: true } };

/**
 * Keywords that describe a setting to people and validate nothing: left out of what is compiled, so
 * the generated code does not carry the form's words along (Ajv keeps a schema it refers to whole).
 */
const ANNOTATIONS = new Set(['title', 'description', '$comment', ...UI_KEYWORDS]);

/** Where a schema holds schemas (rather than names or values), as config.schema.json uses them. */
const SUBSCHEMAS = { map: ['properties'], single: ['items', 'if', 'then', 'else', 'not'], list: ['anyOf', 'allOf', 'oneOf'] };

export interface GeneratedModule {
  /** From the repository's root. */
  path: string;
  text: string;
}

/** The compiled checks: Ajv's code as it wrote it, and its types for the TypeScript that imports it. */
export const CONFIG_CHECKS = join('src', 'config', 'config-checks.generated');
export const ENVELOPE_CHECKS = join('src', 'cloud', 'envelope-checks.generated');
export const STATUS_CHECK = join('src', 'status', 'status-check.generated');

/** The platform block's schema, as config.schema.json has it. */
export function configSchema(): SchemaObject {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'config.schema.json'), 'utf8')) as { schema: SchemaObject }).schema;
}

/** The six files, as `npm run validators` writes them; `schema` in place of config.schema.json's, for a test. */
export function generatedModules(schema = configSchema()): GeneratedModule[] {
  const configExports = ['platformBlock', 'accountBlock'];
  const envelopeExports = Object.keys(ENVELOPE_SCHEMAS);
  return [
    { path: `${CONFIG_CHECKS}.js`, text: moduleText('config.schema.json', configChecks(schema), ADDRESS_PRELUDE) },
    { path: `${CONFIG_CHECKS}.d.ts`, text: declarationText('config.schema.json', configExports) },
    { path: `${ENVELOPE_CHECKS}.js`, text: moduleText('src/cloud/envelope-schemas.ts', envelopeChecks(envelopeExports)) },
    { path: `${ENVELOPE_CHECKS}.d.ts`, text: declarationText('src/cloud/envelope-schemas.ts', envelopeExports) },
    { path: `${STATUS_CHECK}.js`, text: moduleText('src/status/status-schema.ts', statusCheck(), STATUS_FORMATS_PRELUDE) },
    { path: `${STATUS_CHECK}.d.ts`, text: declarationText('src/status/status-schema.ts', ['deliveryStatus']) },
  ];
}

/**
 * `platformBlock` and `accountBlock`: the whole block, and the account alone (the settings page's
 * sign-in form). Without messages: the plugin words each problem itself, from the keyword and path.
 */
function configChecks(fullSchema: SchemaObject): string {
  const schema = withoutAnnotations(fullSchema);
  const ajv = configAjv({ ...STANDALONE, messages: false });
  ajv.addSchema(schema, 'platformBlock');
  ajv.addSchema(schema.properties.account, 'accountBlock');
  return standaloneCode(ajv, { platformBlock: 'platformBlock', accountBlock: 'accountBlock' });
}

/** With messages: a malformed answer is described by the first error's ("data.token must be string"). */
function envelopeChecks(names: readonly string[]): string {
  const ajv = new Ajv(STANDALONE);
  for (const name of names) {
    ajv.addSchema(ENVELOPE_SCHEMAS[name] as SchemaObject, name);
  }
  return standaloneCode(ajv, Object.fromEntries(names.map((name) => [name, name])));
}

/** The formats status.json's schema names, as the generated module defines them from what it imports. */
const STATUS_FORMATS = new Name('formats');
const STATUS_FORMATS_PRELUDE = [`import { isTimestamp } from '../values/time.js';`, '', `const ${STATUS_FORMATS.str} = { 'date-time': isTimestamp };`];

/** `deliveryStatus`: status.json, which the plugin writes and the settings page reads. */
function statusCheck(): string {
  const ajv = new Ajv({ ...STANDALONE, code: { ...STANDALONE.code, formats: _`${STATUS_FORMATS}` }, formats: { 'date-time': isTimestamp } });
  ajv.addSchema(STATUS_SCHEMA, 'deliveryStatus');
  return standaloneCode(ajv, { deliveryStatus: 'deliveryStatus' });
}

/** The schema without ANNOTATIONS, at every level where a schema is. */
export function withoutAnnotations(schema: SchemaObject): SchemaObject {
  const kept = Object.entries(schema).filter(([keyword]) => !ANNOTATIONS.has(keyword));
  return Object.fromEntries(
    kept.map(([keyword, value]) => {
      if (SUBSCHEMAS.map.includes(keyword)) {
        return [keyword, Object.fromEntries(Object.entries(value as Record<string, SchemaObject>).map(([name, sub]) => [name, withoutAnnotations(sub)]))];
      }
      if (SUBSCHEMAS.single.includes(keyword)) {
        return [keyword, withoutAnnotations(value as SchemaObject)];
      }
      if (SUBSCHEMAS.list.includes(keyword)) {
        return [keyword, (value as SchemaObject[]).map(withoutAnnotations)];
      }
      return [keyword, value];
    }),
  );
}

const GENERATED_BY = (source: string): string => `// Generated by \`npm run validators\` (scripts/lib/validators.ts) from ${source}: do not edit.`;

/**
 * Ajv's code with what it needs around it: `prelude`, the functions it calls (address checks, formats),
 * and `require` for Ajv's small run-time helpers (such as counting a string's characters as JSON Schema does), which its code loads
 * that way in an ES module too. Plain JavaScript, copied into dist/ as it is: compiled by TypeScript,
 * it would be re-indented and take more memory as source text.
 */
function moduleText(source: string, code: string, prelude: readonly string[] = []): string {
  const lines = [GENERATED_BY(source)];
  if (code.includes('require(')) {
    lines.push("import { createRequire } from 'node:module';");
  }
  lines.push(...prelude);
  if (code.includes('require(')) {
    lines.push('', 'const require = createRequire(import.meta.url);');
  }
  // The directive Ajv starts with is the rule in an ES module anyway.
  return `${lines.join('\n')}\n${code.replace(/^"use strict";\n?/, '')}\n`;
}

function declarationText(source: string, names: readonly string[]): string {
  return [
    GENERATED_BY(source),
    "import type { ErrorObject } from 'ajv';",
    '',
    '/** True when the data fits the schema; otherwise false, with Ajv\'s errors on the function. Fills in the schema\'s defaults. */',
    'export type CompiledCheck = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };',
    '',
    ...names.map((name) => `export declare const ${name}: CompiledCheck;`),
    '',
  ].join('\n');
}
