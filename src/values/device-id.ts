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
