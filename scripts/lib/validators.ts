/**
 * The config check, compiled by Ajv when the plugin is built rather than at every start of the plugin
 * (Ajv's standalone code): the platform block and the account block against config.schema.json, the
 * one statement of the config's shape, which the Homebridge UI draws its form from too. Beside it, the
 * schema as a TypeScript type, from which src/config/config-schema.ts derives the settings' types.
 *
 * `npm run validators` writes them into src/config/ (git ignores them), and runs at `npm install`,
 * before the typecheck and in the build, which copies them into dist/config/: after a change to
 * config.schema.json, run it (or one of those) before running a test on its own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { _, Ajv, Name, type CodeKeywordDefinition, type Options, type SchemaObject } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import { isListenAddress, isWebAddress } from '../../src/values/address.js';
import { REPO_ROOT } from './paths.js';

/** Keywords the Homebridge UI reads from the schema to draw the form; they validate nothing. */
export const UI_KEYWORDS = ['placeholder', 'condition', 'functionBody', 'titleMap', 'x-schema-form'];

/** What a setting must be, in words, where its pattern cannot say it: the log's words (src/config/messages.ts). */
export const WORDS_KEYWORDS = ['x-must-be'];

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
  ajv.addVocabulary([...UI_KEYWORDS, ...WORDS_KEYWORDS]);
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
const ANNOTATIONS = new Set(['title', 'description', '$comment', ...UI_KEYWORDS, ...WORDS_KEYWORDS]);

/** Where a schema holds schemas (rather than names or values), as config.schema.json uses them. */
const SUBSCHEMAS = { map: ['properties'], single: ['items', 'if', 'then', 'else', 'not'], list: ['anyOf', 'allOf', 'oneOf'] };

export interface GeneratedModule {
  /** From the repository's root. */
  path: string;
  text: string;
}

/** The compiled checks, Ajv's code as it wrote it, and their types for the TypeScript that imports them. */
export const CONFIG_CHECKS = join('src', 'config', 'config-checks.generated');

/** The platform block's schema, as config.schema.json has it. */
export function configSchema(): SchemaObject {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'config.schema.json'), 'utf8')) as { schema: SchemaObject }).schema;
}

/** The two files, as `npm run validators` writes them. */
export function generatedModules(schema = configSchema()): GeneratedModule[] {
  return [
    { path: `${CONFIG_CHECKS}.js`, text: moduleText(configChecks(schema)) },
    { path: `${CONFIG_CHECKS}.d.ts`, text: declarationText(['platformBlock', 'accountBlock'], schema) },
  ];
}

/**
 * `platformBlock` and `accountBlock`: the whole block, and the account alone (the settings page's
 * sign-in form). Without messages: the plugin words each problem itself, from the schema.
 */
function configChecks(fullSchema: SchemaObject): string {
  const schema = withoutAnnotations(fullSchema);
  const ajv = configAjv({ ...STANDALONE, messages: false });
  ajv.addSchema(schema, 'platformBlock');
  ajv.addSchema(schema.properties.account, 'accountBlock');
  return standaloneCode(ajv, { platformBlock: 'platformBlock', accountBlock: 'accountBlock' });
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

const GENERATED_BY = '// Written by `npm run validators` (scripts/lib/validators.ts) from config.schema.json: do not edit.';

/**
 * Ajv's code with what it needs around it: the address checks it calls, and `require` for Ajv's small
 * run-time helpers (such as counting a string's characters as JSON Schema does), which its code loads
 * that way in an ES module too. Plain JavaScript, copied into dist/ as it is: compiled by TypeScript,
 * it would be re-indented and take more memory as source text.
 */
function moduleText(code: string): string {
  const lines = [GENERATED_BY];
  if (code.includes('require(')) {
    lines.push("import { createRequire } from 'node:module';");
  }
  lines.push(...ADDRESS_PRELUDE);
  if (code.includes('require(')) {
    lines.push('', 'const require = createRequire(import.meta.url);');
  }
  // The directive Ajv starts with is the rule in an ES module anyway.
  return `${lines.join('\n')}\n${code.replace(/^"use strict";\n?/, '')}\n`;
}

/**
 * The checks' types, and the schema as a type (its rules without the form's words) for json-schema-to-ts.
 * Every object in it is closed (`additionalProperties: false`): the block reaches the check without
 * the settings the schema does not declare (src/config/schema-check.ts), so it holds no other key.
 */
function declarationText(names: readonly string[], schema: SchemaObject): string {
  return [
    GENERATED_BY,
    "import type { ErrorObject } from 'ajv';",
    '',
    "/** True when the data fits the schema; otherwise false, with Ajv's errors on the function. Fills in the schema's defaults. */",
    'export type CompiledCheck = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };',
    '',
    ...names.map((name) => `export declare const ${name}: CompiledCheck;`),
    '',
    `export type PlatformSchema = ${JSON.stringify(closed(withoutAnnotations(schema)))};`,
    '',
  ].join('\n');
}

/** Every object schema, at any depth, with `additionalProperties: false`. */
function closed(schema: SchemaObject): SchemaObject {
  const inner = Object.fromEntries(
    Object.entries(schema).map(([keyword, value]) => {
      if (SUBSCHEMAS.map.includes(keyword)) {
        return [keyword, Object.fromEntries(Object.entries(value as Record<string, SchemaObject>).map(([name, sub]) => [name, closed(sub)]))];
      }
      return [keyword, SUBSCHEMAS.single.includes(keyword) ? closed(value as SchemaObject) : value];
    }),
  );
  return schema.properties === undefined ? inner : { ...inner, additionalProperties: false };
}
