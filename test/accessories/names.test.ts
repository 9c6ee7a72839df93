import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { cleanName, HOMEKIT_NAME_LENGTH, isHomeKitName, type NameUnit } from '../../src/accessories/names.js';
import { hap } from '../../scripts/lib/hap.js';
import { propertyRuns } from '../support/property-runs.js';

/** The suffixes the plugin's services use, and the two limits: HomeKit's in code units, Matter's in bytes. */
const SUFFIXES = ['', ' Motion Alerts', ' Chime', ' Doorbell', ' Person', ' Vehicle', ' Package', ' Animal', ' Other Motion'];
const LIMITS: ReadonlyArray<readonly [number, NameUnit]> = [
  [HOMEKIT_NAME_LENGTH, 'utf16'],
  [32, 'utf8'],
];

function lengthIn(unit: NameUnit, text: string): number {
  return unit === 'utf8' ? new TextEncoder().encode(text).length : text.length;
}

/**
 * What HAP-NodeJS itself says of a name given to a service, its Name and its ConfiguredName: the
 * name check prints with console.warn, the length check emits a characteristic warning.
 */
function hapWarnings(name: string): string[] {
  const warnings: string[] = [];
  const warn = jest.spyOn(console, 'warn').mockImplementation((...message: unknown[]) => warnings.push(message.join(' ')));
  try {
    const service = new hap.Service.MotionSensor(name);
    service.on('characteristic-warning', ({ message }) => warnings.push(message));
    service.addOptionalCharacteristic(hap.Characteristic.ConfiguredName);
    service.setCharacteristic(hap.Characteristic.Name, name).setCharacteristic(hap.Characteristic.ConfiguredName, name);
  } finally {
    warn.mockRestore();
  }
  return warnings;
}

/** Letters and digits, decomposed so that a letter composed from two (Hangul) compares as its parts. */
function lettersOf(text: string): string {
  return [...text.normalize('NFC')].filter((character) => /[\p{L}\p{N}]/u.test(character)).join('').normalize('NFD');
}

const deviceIds = fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String);

/** Names people type, odd ones, and anything at all (any code point, lone surrogates too). */
const NAME_CHARACTERS = [...'Front Door Porch Haustür Straße 玄関ドア 門 𠀋 O’Brien’s & Co. _:;/,-!'] // letters of many scripts, HAP's punctuation
  .concat(['(', ')', '[', ']', '🚪', '🔔', '👨‍👩‍👧', '\u0000', '\t', '\n', '\u001b', '\u200b', '\u2028', '\u00a0', '\u3000', 'u\u0308', '\u1100', '\u1161', '#', '"', '*']);
const names = fc.oneof(
  fc.string({ unit: fc.constantFrom(...NAME_CHARACTERS), maxLength: 80 }),
  fc.string({ unit: fc.constantFrom(...NAME_CHARACTERS), minLength: 30, maxLength: 150 }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 120 }),
);

/** Names HAP-NodeJS accepts as they are, of letters from several scripts. */
const ACCEPTED_CHARACTERS = [...'AbzÄüßéñ漢字かなカナ한글𠀋Ωж٣7 \u00a0’\'&!._:;()/,-'];
const acceptedNames = fc
  .string({ unit: fc.constantFrom(...ACCEPTED_CHARACTERS), minLength: 2, maxLength: 70 })
  .filter((name) => isHomeKitName(name) && name === name.normalize('NFC'));

describe('cleanName', () => {
  it.each([
    ['Front Door (Main)', 'Front Door Main'],
    ['Front Door(Main)', 'Front Door Main'],
    ['🚪 Porch', 'Porch'],
    ['Porch 🚪', 'Porch'],
    ['Haustür', 'Haustür'],
    ['Haustu\u0308r', 'Haustür'],
    ['Straße', 'Straße'],
    ['玄関 ドア', '玄関 ドア'],
    ["O’Brien's Door", "O’Brien's Door"],
    ['Tür [Süd]', 'Tür Süd'],
    ['Garage (Left (Upper))', 'Garage Left Upper'],
    ['Front Door (Main', 'Front Door (Main'],
    ['- Back Door -', 'Back Door'],
    ['Back\u0000Door\u001b', 'BackDoor'],
    ['Front Door.', 'Front Door'],
    // Two Hangul letters that compose into one once the character between them is dropped.
    ['한\u1100#\u1161', '한가'],
  ])('cleans %j to %j', (configured, cleaned) => {
    expect(cleanName(configured, '1234567')).toBe(cleaned);
  });

  it.each(['🚪', '', '   ', '()', 'A', '-A-', '🚪 X'])('names %j `Doorbell <deviceId>`: fewer than two characters are left', (configured) => {
    expect(cleanName(configured, '1234567')).toBe('Doorbell 1234567');
    expect(cleanName(configured, '1234567', ' Person')).toBe('Doorbell 1234567 Person');
  });

  it('cuts the doorbell’s part so the whole name, suffix kept, has at most 64 characters, then trims it', () => {
    const long = 'Front Door '.repeat(10);
    expect(cleanName(long, '1')).toBe('Front Door Front Door Front Door Front Door Front Door Front Doo');
    expect(cleanName(long, '1', ' Motion Alerts')).toBe('Front Door Front Door Front Door Front Door Front Motion Alerts');
    expect(cleanName('x'.repeat(100), '1', ' Motion Alerts')).toHaveLength(64);
  });

  it('takes a shorter limit, as Matter’s 32, and never cuts a character in half', () => {
    expect(cleanName('Front Door Main Entrance', '1', ' Other Motion', 32)).toBe('Front Door Main Ent Other Motion');
    // 𠀋 is one letter in two UTF-16 code units: 61 units left by the suffix hold 30 of them.
    expect(cleanName('𠀋'.repeat(40), '1', ' 門門')).toBe(`${'𠀋'.repeat(30)} 門門`);
    expect(cleanName('🚪', '9223372036854775807', ' Other Motion', 32)).toBe('Doorbell 9223372036 Other Motion');
  });

  it('counts bytes of UTF-8 for Matter: a letter beyond ASCII takes two or more, and is never cut in half', () => {
    // 32 code units, 33 bytes: ü takes two.
    const configured = 'Garagentür an der Einfahrt zum Hof';
    expect(cleanName(configured, '1', '', 32)).toBe('Garagentür an der Einfahrt zum H');
    expect(cleanName(configured, '1', '', 32, 'utf8')).toBe('Garagentür an der Einfahrt zum');
    expect(cleanName(configured, '1', ' Doorbell', 32, 'utf8')).toBe('Garagentür an der Einf Doorbell');
    // Three bytes each: 23 bytes left by the suffix hold seven of them, not eight.
    expect(cleanName('玄関ドア玄関ドア玄関ドア', '1', ' Doorbell', 32, 'utf8')).toBe('玄関ドア玄関ド Doorbell');
    // Four bytes, two code units: 𠀋 fits whole or not at all.
    expect(cleanName('𠀋'.repeat(10), '1', ' Person', 32, 'utf8')).toBe(`${'𠀋'.repeat(6)} Person`);
    expect(cleanName('Front Door', '1', ' Other Motion', 32, 'utf8')).toBe('Front Door Other Motion');
  });

  it('reads only the first 1,000 characters, so that no name, however long or odd, holds up the start', () => {
    // Checked by what is read, not by how long it takes, which depends on the machine: a megabyte of
    // brackets comes out as its first 1,000 characters do, whatever follows them.
    for (const pasted of ['()'.repeat(500_000), `a${'('.repeat(500_000)}b${')'.repeat(500_000)}`, `(x)${'!'.repeat(1_000_000)}a`]) {
      const read = pasted.slice(0, 1_000);
      expect(cleanName(pasted, '1')).toBe(cleanName(read, '1'));
      expect(isHomeKitName(cleanName(pasted, '1'))).toBe(true);
      expect(cleanName(`${read}Porch`, '1')).toBe(cleanName(read, '1'));
    }
    // The 1,000th character is read and the 1,001st is not.
    expect(cleanName(`${'!'.repeat(998)}ab`, '1')).toBe('ab');
    expect(cleanName(`${'!'.repeat(999)}ab`, '1')).toBe('Doorbell 1');
    expect(cleanName(`${'🚪'.repeat(500)}Porch`, '1')).toBe('Doorbell 1');
  });

  it('refuses a suffix HomeKit would not accept or that leaves no room: a mistake in the code', () => {
    expect(() => cleanName('Front Door', '1', ' Person!')).toThrow(RangeError);
    expect(() => cleanName('Front Door', '1', ' 🚪 Person')).toThrow(RangeError);
    expect(() => cleanName('Front Door', '1', ' Motion Alerts', 15)).toThrow(RangeError);
    expect(() => cleanName('Front Door', '1', '', 1.5)).toThrow(RangeError);
  });

  it('gives names HAP-NodeJS warns about for the config’s odd names, and none for their cleaned forms', () => {
    for (const configured of ['Front Door (Main)', '🚪 Porch', 'x'.repeat(100)]) {
      expect(hapWarnings(configured)).not.toEqual([]);
      expect(hapWarnings(cleanName(configured, '1234567'))).toEqual([]);
    }
  });
});

describe('cleanName, for any input', () => {
  it('gives a name HAP-NodeJS accepts without a warning, within the limit, ending in the suffix', () => {
    fc.assert(
      fc.property(names, deviceIds, fc.constantFrom(...SUFFIXES), fc.constantFrom(...LIMITS), (configured, deviceId, suffix, [limit, unit]) => {
        const name = cleanName(configured, deviceId, suffix, limit, unit);
        expect(isHomeKitName(name)).toBe(true);
        // The doorbell's part alone too: the suffix hides nothing.
        expect(isHomeKitName(name.slice(0, name.length - suffix.length))).toBe(true);
        expect(lengthIn(unit, name)).toBeLessThanOrEqual(limit);
        expect(name.endsWith(suffix)).toBe(true);
        expect(hapWarnings(name)).toEqual([]);
      }),
      propertyRuns(5_000),
    );
  });

  it('is idempotent: a cleaned name, given again, comes back unchanged', () => {
    fc.assert(
      fc.property(names, deviceIds, fc.constantFrom(...SUFFIXES), fc.constantFrom(...LIMITS), (configured, deviceId, suffix, [limit, unit]) => {
        const once = cleanName(configured, deviceId, '', limit, unit);
        expect(cleanName(once, deviceId, '', limit, unit)).toBe(once);
        const withSuffix = cleanName(configured, deviceId, suffix, limit, unit);
        expect(cleanName(withSuffix.slice(0, withSuffix.length - suffix.length), deviceId, suffix, limit, unit)).toBe(withSuffix);
      }),
      propertyRuns(5_000),
    );
  });

  it('keeps a name HomeKit accepts and that fits exactly as it is, ü, ß and CJK letters included', () => {
    fc.assert(
      fc.property(acceptedNames, deviceIds, fc.constantFrom(...SUFFIXES), (configured, deviceId, suffix) => {
        fc.pre(configured.length + suffix.length <= HOMEKIT_NAME_LENGTH);
        expect(cleanName(configured, deviceId, suffix)).toBe(configured + suffix);
      }),
      propertyRuns(5_000),
    );
  });

  it('loses no letter or digit but to the cut: they are the configured name’s, or its first ones', () => {
    fc.assert(
      fc.property(names, deviceIds, fc.constantFrom(...SUFFIXES), fc.constantFrom(...LIMITS), (configured, deviceId, suffix, [limit, unit]) => {
        const part = cleanName(configured, deviceId, suffix, limit, unit).slice(0, -suffix.length || undefined);
        const all = lettersOf(configured);
        if (part === cleanName(`Doorbell ${deviceId}`, deviceId, '', limit - suffix.length, unit)) {
          return;
        }
        expect(all.startsWith(lettersOf(part))).toBe(true);
        if (lengthIn(unit, configured.normalize('NFC')) <= limit - suffix.length) {
          expect(lettersOf(part)).toBe(all);
        }
      }),
      propertyRuns(5_000),
    );
  });
});
