/**
 * README's table of settings, made from config.schema.json: each setting's name as config.json writes
 * it, whether it is required, what it must be (in the words the log uses, src/config/messages.ts), its
 * default, and the title and description the settings form shows. `npm run readme-settings` writes it
 * between the two marker comments; a test fails when README.md holds another.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectation } from '../../src/config/messages.js';
import { platformSchema, type SchemaNode } from '../../src/config/config-schema.js';
import { REPO_ROOT } from './paths.js';

export const README = join(REPO_ROOT, 'README.md');
const START = '<!-- settings table: npm run readme-settings writes it from config.schema.json -->';
const END = '<!-- end of settings table -->';

interface Described extends SchemaNode {
  description?: string;
  default?: unknown;
}

interface Row {
  name: string;
  required: string;
  node: Described;
}

/** Every setting that holds a value (not `account` or `push`, which only hold others), in the schema's order. */
function rows(node: Described, prefix: string, requiredHere: (key: string) => string): Row[] {
  return Object.entries(node.properties ?? {}).flatMap(([key, child]: [string, Described]) => {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    const required = requiredHere(key);
    if (child.properties !== undefined) {
      return rows(child, name, (inner) => requirement(child, inner, required));
    }
    const items = child.items?.properties === undefined ? [] : rows(child.items, `${name}[]`, (inner) => requirement(child.items ?? {}, inner, 'yes'));
    return [{ name, required, node: child }, ...items];
  });
}

/**
 * `yes` where `parent` requires it; where only an `if` makes it required, what the parent's own
 * requirement is (an account's fields: wherever an account is); `yes, unless ...` where an `else` does.
 * At the top of the block, the one account's keys are required unless `accounts` is set (an `if` of
 * `not` it, whose `then` holds the account's own `if`/`else`).
 */
function requirement(parent: SchemaNode, key: string, parentRequired: string): string {
  if (parent.required?.includes(key)) {
    return 'yes';
  }
  const shape = parent.if?.not?.required ?? [];
  if (parent.then?.required?.includes(key)) {
    return shape.length === 0 ? parentRequired : unlessWords(shape);
  }
  if (parent.then?.else?.required?.includes(key)) {
    return unlessWords([...shape, ...(parent.then.if?.required ?? [])]);
  }
  const unless = parent.else?.required?.includes(key) ? parent.if?.required : undefined;
  return unless === undefined ? 'no' : unlessWords(unless);
}

function unlessWords(others: readonly string[]): string {
  return `yes, unless ${others.map((name) => `\`${name}\``).join(' or ')} is set`;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The table, as README.md holds it between the markers. */
export function settingsTable(schema: SchemaNode = platformSchema()): string {
  const lines = rows(schema, '', (key) => requirement(schema, key, 'yes')).map(({ name, required, node }) => {
    const fallback = node.default === undefined ? '' : `\`${JSON.stringify(node.default)}\``;
    const about = [node.title === undefined ? '' : `**${node.title}**.`, node.description ?? ''].join(' ').trim();
    return `| \`${name}\` | ${required} | ${cell(expectation(node) ?? '')} | ${fallback} | ${cell(about)} |`;
  });
  return ['| setting | required | must be | default | what it is |', '|---|---|---|---|---|', ...lines].join('\n');
}

/** `readme` with the table between the markers replaced by today's. */
export function withSettingsTable(readme: string, table = settingsTable()): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start === -1 || end < start) {
    throw new Error(`README.md has no settings table between "${START}" and "${END}"`);
  }
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}

export function readReadme(): string {
  return readFileSync(README, 'utf8');
}
