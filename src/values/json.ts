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
