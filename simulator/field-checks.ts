import type { RequestCheck } from './request-check.js';

/**
 * Checks of the fields a request carries: url-encoded pairs (query and form body), e-mail addresses,
 * device ids and JSON shapes. Values are never echoed in reasons: some of them are secrets.
 */

/** Deliberately its own copy of the int64 rule: the simulator must not share the plugin's code it checks. */
const MAX_DEVICE_ID = 9223372036854775807n;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isEmail(value: string): boolean {
  return EMAIL.test(value);
}

/** A canonical decimal from 1 to 2^63-1, compared as a BigInt so no digit is ever rounded. */
export function isDeviceIdText(value: string): boolean {
  return /^[1-9][0-9]*$/.test(value) && BigInt(value) <= MAX_DEVICE_ID;
}

/** The account fields with a fixed format, checked alike in a login form and in a simulated account. */
export type AccountField = 'code' | 'country' | 'countryCode';

/** In the order they are checked. */
export const ACCOUNT_FIELD_FORMATS: ReadonlyArray<{ key: AccountField; pattern: RegExp; expectation: string }> = [
  { key: 'code', pattern: /^[0-9]{6}$/, expectation: '6 digits' },
  { key: 'country', pattern: /^[A-Z]{2}$/, expectation: '2 uppercase letters' },
  { key: 'countryCode', pattern: /^[0-9]{1,4}$/, expectation: '1 to 4 digits' },
];

/** Why `value` does not fit as field `key`, e.g. "code must be 6 digits"; undefined when it does. */
export function fieldFormatProblem(key: string, value: string, pattern: RegExp, expectation: string): string | undefined {
  return pattern.test(value) ? undefined : `${key} must be ${expectation}`;
}

export interface FormField {
  /** As sent, still encoded. */
  raw: string;
  value: string;
}

/** URL-encoded pairs decode '+' as a space (WHATWG rules); undefined when the percent-encoding is broken. */
function decodeFormText(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** Reads `a=1&b=2`, requiring exactly the expected keys, each once. */
export function readExactFields(check: RequestCheck, text: string, expected: readonly string[], where: string): Map<string, FormField> {
  const fields = new Map<string, FormField>();
  for (const pair of text === '' ? [] : text.split('&')) {
    const separator = pair.indexOf('=');
    const raw = separator === -1 ? '' : pair.slice(separator + 1);
    const key = decodeFormText(separator === -1 ? pair : pair.slice(0, separator));
    const value = decodeFormText(raw);
    if (key === undefined || value === undefined) {
      check.violation(`${where} has broken percent-encoding`);
    } else if (!expected.includes(key)) {
      check.violation(`${where} has unexpected key ${JSON.stringify(key)}`);
    } else if (fields.has(key)) {
      check.violation(`${where} key ${key} sent more than once`);
    } else {
      fields.set(key, { raw, value });
    }
  }
  for (const key of expected.filter((name) => !fields.has(name))) {
    check.violation(`${where} is missing ${key}`);
  }
  return fields;
}

/** Requires the field (when present) to match `pattern`; returns its decoded value. */
export function requireFieldFormat(check: RequestCheck, fields: Map<string, FormField>, key: string, pattern: RegExp, expectation: string): string {
  const field = fields.get(key);
  const problem = field === undefined ? undefined : fieldFormatProblem(key, field.value, pattern, expectation);
  if (problem !== undefined) {
    check.violation(problem);
  }
  return field?.value ?? '';
}

/** requireFieldFormat for each account field, in table order; returns their decoded values. */
export function requireAccountFieldFormats(check: RequestCheck, fields: Map<string, FormField>): Record<AccountField, string> {
  const values = {} as Record<AccountField, string>;
  for (const { key, pattern, expectation } of ACCOUNT_FIELD_FORMATS) {
    values[key] = requireFieldFormat(check, fields, key, pattern, expectation);
  }
  return values;
}

/** A raw '+' decodes as a space, which silently turns a+b@x into "a b@x": the classic encoding bug. */
export function requireEmailField(check: RequestCheck, fields: Map<string, FormField>, where: string): string {
  const field = fields.get('email');
  if (field === undefined) {
    return '';
  }
  if (field.raw.includes('+')) {
    check.violation(`${where} email has a raw "+", which decodes as a space: percent-encode it as %2B`);
  } else if (!isEmail(field.value)) {
    check.violation(`${where} email must be an e-mail address`);
  }
  return field.value;
}

/** A JSON shape: 'string' is a non-empty string leaf, an object lists exactly the keys allowed. */
export type Shape = 'string' | { readonly [key: string]: Shape };

/** Requires `value` to have exactly `shape`: no missing key, no extra key, at any depth. */
export function requireExactShape(check: RequestCheck, value: unknown, shape: Shape, path: string): void {
  if (shape === 'string') {
    if (typeof value !== 'string' || value === '') {
      check.violation(`${path} must be a non-empty string`);
    }
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    check.violation(`${path} must be an object`);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record).filter((name) => !Object.hasOwn(shape, name))) {
    check.violation(`${path} has unexpected key ${JSON.stringify(key)}`);
  }
  for (const [key, inner] of Object.entries(shape)) {
    if (Object.hasOwn(record, key)) {
      requireExactShape(check, record[key], inner, `${path}.${key}`);
    } else {
      check.violation(`${path} is missing ${key}`);
    }
  }
}
