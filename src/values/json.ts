
/**
 * Values read from JSON: plain objects and strings, int64 device ids, and JSON that keeps every digit
 * of its numbers.
 */
/** Checks on values read from JSON: config blocks, stored files, service answers and pushed notifications. */

/**
 * A plain JSON object: not null, not an array, and not an instance of a class (an Error, or a number
 * the notification parser keeps as its source text). Its prototype is the root of the prototype
 * chain, whichever realm made it (structuredClone and test sandboxes make objects in other realms).
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * Doorbell device ids are int64 values. They travel as decimal strings end to end, because a JS
 * number silently loses precision above 2^53 (9007199254740993 would become ...992).
 */
export const MAX_DEVICE_ID = 9223372036854775807n;

const DECIMAL = /^[1-9][0-9]*$/;

/** True for a canonical decimal string from 1 to 9223372036854775807. */
export function isDeviceId(value: unknown): value is string {
  return typeof value === 'string' && DECIMAL.test(value) && value.length <= 19 && BigInt(value) <= MAX_DEVICE_ID;
}

/**
 * A device id as its decimal text. config.json may hold an id as a JSON integer, which counts while it
 * is a safe integer, every digit exact; anything else is returned as it is, for the caller's check to
 * accept (a string) or reject (an unsafe integer, whose last digits are already lost).
 */
export function deviceIdText(value: unknown): unknown {
  return Number.isSafeInteger(value) ? String(value) : value;
}

/**
 * JSON whose numbers keep the text they were written in. Doorbell ids are int64 values, and a JS
 * number would turn the id 9007199254740993 into ...992 (and make `1e6` and `1000000` the same).
 */

/** A JSON number as written. */
export class JsonNumber {
  constructor(readonly source: string) {}

  /** JSON's grammar already rules out leading zeros and a plus sign. */
  isInteger(): boolean {
    return /^-?\d+$/.test(this.source);
  }
}

/** JSON.parse source text access (Node.js 22+); TypeScript's ES2022 lib does not describe it yet. */
interface ReviverContext {
  source?: string;
}

/**
 * JSON.parse, with every number a JsonNumber. Throws SyntaxError for text that is not JSON, and
 * RangeError for absurd nesting (the reviver walks the value recursively).
 */
export function parseJsonKeepingNumberText(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: ReviverContext) => {
    if (typeof value !== 'number') {
      return value;
    }
    if (context?.source === undefined) {
      throw new Error('JSON.parse source text access is missing: Node.js 22 or later is required');
    }
    return new JsonNumber(context.source);
  });
}

/** A device id written as a JSON integer or a decimal string, as its exact decimal digits; undefined when it is neither. */
export function exactDeviceId(value: unknown): string | undefined {
  const text = value instanceof JsonNumber ? value.source : value;
  return isDeviceId(text) ? text : undefined;
}
