import { isDeviceId } from './device-id.js';

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
