import type { ErrorObject } from 'ajv';
import { accountBlock, platformBlock, type CompiledCheck } from './config-checks.generated.js';
import { platformSchema, type SchemaNode } from './config-schema.js';
import {
  type Problem,
  type SettingPath,
  genericName,
  holdsCredentials,
  schemaNodeAt,
  isRequired,
  mustBe,
  mustBeQuoted,
  repeatsDeviceId,
  unknownSetting,
} from './messages.js';
import { hasUserInfo } from '../values/address.js';
import { deviceIdText, isDeviceId } from '../values/json.js';
import { isJsonObject } from '../values/json.js';

/**
 * Checks a platform block against config.schema.json, the very file the Homebridge UI draws its
 * form from, so the UI and the plugin can never disagree on what a valid block is. Ajv compiled the
 * schema's checks when the plugin was built (config-checks.generated.js, written by
 * scripts/lib/validators.ts), so the plugin starts without Ajv's compiler.
 */

export interface CheckedBlock {
  /** A copy of the block: deviceIds as strings, the schema's defaults filled in. */
  data: Record<string, unknown>;
  /** Each makes its doorbell entry, or the whole block, unusable. */
  problems: Problem[];
}

/** A block without the settings the schema does not declare, and where each of those was. */
export interface KnownSettings {
  block: Record<string, unknown>;
  unknown: Problem[];
}

/** A block that holds only settings the schema declares (see withoutUnknownSettings). */
export function checkBlock(block: Record<string, unknown>): CheckedBlock {
  const data = withDeviceIdsAsStrings(block);
  const problems = schemaProblems(platformBlock, data);
  return { data, problems: uniqueMessages([...problems, ...deviceIdProblems(data, problems)]) };
}

/**
 * An account block on its own, by the same rules; problems are named from `account` down. Keys it
 * does not know are left out, as in the platform block.
 */
export function checkAccount(account: Record<string, unknown>): CheckedBlock {
  const data = structuredClone(knownPart(account, platformSchema().properties?.account ?? {}, ['account'], []) as Record<string, unknown>);
  return { data, problems: uniqueMessages(schemaProblems(accountBlock, data, ['account'])) };
}

/**
 * A note, or a setting of a newer version of the plugin after a downgrade, is no reason to stop: the
 * block without them, and one problem naming each, for a warning.
 */
export function withoutUnknownSettings(block: Record<string, unknown>): KnownSettings {
  const unknown: SettingPath[] = [];
  const known = knownPart(block, platformSchema(), [], unknown) as Record<string, unknown>;
  return { block: known, unknown: unknown.map(unknownSetting) };
}

/**
 * A deviceId may be a JSON integer, but the schema types it as a string: the UI then draws
 * a plain text field, and one pattern checks every id. So a safe integer becomes its decimal
 * string here; an unsafe one stays a number for the schema to reject (see mustBeQuoted).
 */
function withDeviceIdsAsStrings(block: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(block);
  for (const { list } of doorbellLists(copy)) {
    for (const doorbell of list) {
      if (isJsonObject(doorbell) && 'deviceId' in doorbell) {
        doorbell.deviceId = deviceIdText(doorbell.deviceId);
      }
    }
  }
  return copy;
}

/** Every list of doorbells in the block, with its place: the top-level one, and each entry of `accounts`' own. */
function doorbellLists(data: Record<string, unknown>): Array<{ at: SettingPath; list: unknown[] }> {
  const top = Array.isArray(data.doorbells) ? [{ at: ['doorbells'], list: data.doorbells as unknown[] }] : [];
  const entries = Array.isArray(data.accounts) ? (data.accounts as unknown[]) : [];
  const ofEntries = entries.flatMap((entry, index) =>
    isJsonObject(entry) && Array.isArray(entry.doorbells) ? [{ at: ['accounts', index, 'doorbells'], list: entry.doorbells as unknown[] }] : [],
  );
  return [...top, ...ofEntries];
}

/** `at`: where in the platform block the checked data sits. */
function schemaProblems(check: CompiledCheck, data: Record<string, unknown>, at: SettingPath = []): Problem[] {
  if (check(data)) {
    return [];
  }
  return (check.errors ?? []).flatMap((error) => problemOf(error, data, at) ?? []);
}

function problemOf(error: ErrorObject, data: unknown, at: SettingPath): Problem | undefined {
  const inData = pathOf(error);
  const path = [...at, ...inData];
  switch (error.keyword) {
    case 'if':
      return undefined; // its `else` has already reported the missing key
    case 'required':
      return isRequired([...path, String(error.params.missingProperty)]);
    default: {
      const value = valueAt(data, inData);
      if (isUrlSetting(path) && typeof value === 'string' && hasUserInfo(value)) {
        return holdsCredentials(path);
      }
      return isUnquotedLargeId(path, value) ? mustBeQuoted(path) : mustBe(path);
    }
  }
}

/** A setting the schema marks as a URL (`"x-address": "url"`). */
function isUrlSetting(path: SettingPath): boolean {
  return schemaNodeAt(path)?.['x-address'] === 'url';
}

function isUnquotedLargeId(path: SettingPath, value: unknown): boolean {
  return ['doorbells[].deviceId', 'accounts[].doorbells[].deviceId'].includes(genericName(path)) && Number.isInteger(value) && !Number.isSafeInteger(value);
}

/**
 * What the schema's pattern cannot say: the int64 upper bound, and that ids are unique within a list
 * of doorbells. (Between accounts a repeated id is only warned of: parse-config.ts.)
 */
function deviceIdProblems(data: Record<string, unknown>, schemaProblems: readonly Problem[]): Problem[] {
  return doorbellLists(data).flatMap(({ at, list }) => deviceIdProblemsOf(list, at, schemaProblems));
}

function deviceIdProblemsOf(doorbells: readonly unknown[], at: SettingPath, schemaProblems: readonly Problem[]): Problem[] {
  const inList = (path: SettingPath) => at.every((part, index) => path[index] === part);
  // An entry left out for a problem of its own claims no id: a later entry with the same id is used.
  const leftOut = new Set(schemaProblems.map(({ path }) => (inList(path) ? path[at.length] : undefined)));
  const problems: Problem[] = [];
  const firstIndexOf = new Map<string, number>();
  doorbells.forEach((doorbell, index) => {
    const deviceId = isJsonObject(doorbell) ? doorbell.deviceId : undefined;
    if (typeof deviceId !== 'string') {
      return; // the schema has reported it
    }
    const path = [...at, index, 'deviceId'];
    const first = firstIndexOf.get(deviceId);
    if (!isDeviceId(deviceId)) {
      problems.push(mustBe(path));
    } else if (first !== undefined) {
      problems.push(repeatsDeviceId(path, [...at, first, 'deviceId']));
    } else if (!leftOut.has(index)) {
      firstIndexOf.set(deviceId, index);
    }
  });
  return problems;
}

/**
 * `value` without the settings the schema does not declare, at any depth; their paths go to
 * `unknown`. Walking the schema's properties, rather than `additionalProperties: false`, keeps
 * Homebridge's own keys (`platform`, `_bridge`) out of the schema the UI draws from; the caller has
 * already set them aside.
 */
function knownPart(value: unknown, node: SchemaNode, path: SettingPath, unknown: SettingPath[]): unknown {
  const { items, properties } = node;
  if (Array.isArray(value) && items) {
    return value.map((item, index) => knownPart(item, items, [...path, index], unknown));
  }
  if (!isJsonObject(value) || !properties) {
    return value;
  }
  const known = Object.entries(value).flatMap(([key, child]): Array<[string, unknown]> => {
    const childNode = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (childNode === undefined) {
      unknown.push([...path, key]);
      return [];
    }
    return [[key, knownPart(child, childNode, [...path, key], unknown)]];
  });
  return Object.fromEntries(known);
}

/** The path of an Ajv error, from its JSON pointer. The schema has no numeric property names. */
function pathOf(error: ErrorObject): SettingPath {
  return error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^[0-9]+$/.test(part) ? Number(part) : part));
}

function valueAt(data: unknown, path: SettingPath): unknown {
  return path.reduce<unknown>(
    (value, part) => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined),
    data,
  );
}

/** One line per problem: a bad id can be reported both by the schema and by deviceIdProblems. */
function uniqueMessages(problems: Problem[]): Problem[] {
  return [...new Map(problems.map((problem) => [problem.message, problem])).values()];
}

/**
 * Nothing but the schema's defaults, at any depth: what the Homebridge UI's form fills a list entry
 * with by itself (it draws every list with one entry, even an empty one).
 */
export function isFormBlank(value: unknown, node: SchemaNode | undefined): boolean {
  if (node === undefined) {
    return false;
  }
  // Compared as JSON: the schema's defaults are plain values and lists, and a block may come from another realm (structuredClone).
  if (node.default !== undefined && JSON.stringify(value) === JSON.stringify(node.default)) {
    return true;
  }
  if (Array.isArray(value) && node.items?.type === 'object') {
    return value.every((item) => isFormBlank(item, node.items));
  }
  const { properties } = node;
  return isJsonObject(value) && properties !== undefined && Object.entries(value).every(([key, child]) => Object.hasOwn(properties, key) && isFormBlank(child, properties[key]));
}
