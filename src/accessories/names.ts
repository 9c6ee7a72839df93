/**
 * Names HomeKit accepts. The Home app refuses or mishandles a name that does not begin and end with a
 * letter or digit or that holds characters other than letters, digits, spaces and a little
 * punctuation: HAP-NodeJS warns that such an accessory "may not be added to the Home app". It also
 * cuts a Name longer than 64 characters, with a warning of its own. So every name the plugin gives
 * HomeKit (and, with a shorter limit, Matter) goes through `cleanName` first.
 *
 * HomeKit's lengths count UTF-16 code units (a string's `length`), as HAP-NodeJS and Homebridge
 * measure them; Matter's count bytes of UTF-8, as the Matter specification does (see `NameUnit`).
 * No Homebridge import: the HomeKit and Matter accessories both use this module.
 */

/** HomeKit's longest Name and ConfiguredName: HAP-NodeJS cuts a longer value. */
export const HOMEKIT_NAME_LENGTH = 64;

/**
 * What a name's length counts: `utf16` code units, as HAP-NodeJS does; `utf8` bytes, as the Matter
 * specification bounds a string (matter.js 0.17 checks only code units, which a name within its
 * bytes always satisfies, since no code unit takes less than a byte).
 */
export type NameUnit = 'utf16' | 'utf8';

const MEASURES: Readonly<Record<NameUnit, (text: string) => number>> = {
  utf16: (text) => text.length,
  utf8: (text) => Buffer.byteLength(text, 'utf8'),
};

/** What may stand between the two ends: HAP-NodeJS's own list. */
const INNER = String.raw`\p{L}\p{N}\p{Zs}’'&!._:;()/,\-`;

/** HAP-NodeJS's rule: a letter or digit at each end, and only INNER between. */
const ACCEPTED = new RegExp(`^[\\p{L}\\p{N}][${INNER}]*[\\p{L}\\p{N}]$`, 'u');
const NOT_ACCEPTED = new RegExp(`[^${INNER}]`, 'gu');
const SUFFIX = new RegExp(`^([${INNER}]*[\\p{L}\\p{N}])?$`, 'u');

/**
 * How much of a configured name is read: far more than any name HomeKit shows, and little enough that
 * a name pasted by mistake (a megabyte, or thousands of brackets) cannot hold up Homebridge's start,
 * since taking a bracketed group apart costs time in proportion to the square of the length.
 */
const READ_LENGTH = 1_000;

/** `(…)` followed by nothing but characters that trimming removes anyway. */
const TRAILING_GROUP = /\(([^()]*)\)(?=[^\p{L}\p{N}]*$)/u;
const LEADING_JUNK = /^[^\p{L}\p{N}]+/u;
const TRAILING_JUNK = /[^\p{L}\p{N}]+$/u;
const SPACE = /\p{Zs}$/u;

/** Whether HAP-NodeJS accepts `name` as it is (its length aside). */
export function isHomeKitName(name: string): boolean {
  return ACCEPTED.test(name);
}

/**
 * The name to give HomeKit (or Matter) for a doorbell, or for one of its services.
 *
 * The configured name is cleaned: characters HomeKit does not accept (emoji, symbols, control
 * characters) are dropped while letters of every script stay (`Haustür`, `玄関`); a trailing bracketed
 * group loses its brackets (`Front Door (Main)` → `Front Door Main`); both ends are trimmed to a letter
 * or digit. The doorbell's part is then cut so that it and `suffix` together fit `maxLength`, and
 * trimmed again. When fewer than two characters are left, the doorbell's part is `Doorbell <deviceId>`.
 * A name HomeKit already accepts, and that fits, comes back as it is (in Unicode's composed form, NFC).
 * Only the first 1,000 characters of the configured name are read.
 *
 * @param configured the doorbell's name from the config
 * @param deviceId the doorbell's device id, for the fallback name
 * @param suffix what follows the doorbell's part, kept whole: `' Motion Alerts'`, `' Person'`; empty
 *   or accepted characters ending in a letter or digit
 * @param maxLength the longest whole name: `HOMEKIT_NAME_LENGTH` (64) or Matter's 32
 * @param unit what `maxLength` counts: UTF-16 code units (HomeKit) or UTF-8 bytes (Matter)
 * @throws RangeError for a suffix HomeKit would not accept or that leaves the doorbell's part fewer
 *   than two characters: a mistake in the plugin's code, never in the user's config
 */
export function cleanName(configured: string, deviceId: string, suffix = '', maxLength = HOMEKIT_NAME_LENGTH, unit: NameUnit = 'utf16'): string {
  const measure = MEASURES[unit];
  const room = maxLength - measure(suffix);
  if (!SUFFIX.test(suffix) || !Number.isInteger(maxLength) || room < 2) {
    throw new RangeError(`No name fits: suffix ${JSON.stringify(suffix)} with at most ${maxLength} ${unit === 'utf8' ? 'bytes' : 'characters'}`);
  }
  const part = cut(clean(configured), room, measure);
  return (characters(part) >= 2 ? part : cut(clean(`Doorbell ${deviceId}`), room, measure)) + suffix;
}

function clean(name: string): string {
  // Composed first, so that a ü typed as u and a combining mark stays a ü instead of losing the mark;
  // and again after, since dropping a character can bring two that compose together.
  let kept = name.slice(0, READ_LENGTH).normalize('NFC').replace(NOT_ACCEPTED, '').normalize('NFC');
  // `A (B (C))` takes two rounds; each round removes two brackets, so the loop ends.
  for (let previous = ''; previous !== kept; ) {
    previous = kept;
    kept = kept.replace(TRAILING_GROUP, (_group, inner: string, offset: number, whole: string) =>
      offset === 0 || SPACE.test(whole.slice(0, offset)) ? inner : ` ${inner}`,
    );
  }
  return kept.replace(LEADING_JUNK, '').replace(TRAILING_JUNK, '');
}

/** The longest start of `name`, in whole code points, that `measure`s at most `room`, trimmed at its end. */
function cut(name: string, room: number, measure: (text: string) => number): string {
  if (measure(name) <= room) {
    return name;
  }
  let kept = '';
  for (const character of name) {
    if (measure(kept + character) > room) {
      break;
    }
    kept += character;
  }
  return kept.replace(TRAILING_JUNK, '');
}

function characters(text: string): number {
  return [...text].length;
}
