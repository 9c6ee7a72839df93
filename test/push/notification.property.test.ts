/** Properties of the notification parser over generated input, with fast-check. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseNotification } from '../../src/push/notification.js';
import { MOTION_SUBTYPES, readFrom, SHAPE_NAMES, SHAPES } from '../support/notification-payloads.js';
import { propertyRuns } from '../support/property-runs.js';

const MAX_INT64 = 9223372036854775807n;
const int64 = fc.bigInt({ min: 1n, max: MAX_INT64 });
const beyondSafe = fc.bigInt({ min: BigInt(Number.MAX_SAFE_INTEGER) + 1n, max: MAX_INT64 });

/** Every shape, with the device id and event id written as the given JSON text. */
const shapes = SHAPE_NAMES.map((shape) => (deviceId: string, id: string) => SHAPES[shape]({ deviceId, kind: 'motion', id }));

describe('parseNotification, for any input', () => {
  it('keeps every device id and integer event id exact, above 2^53 too, whether written as a number or a string', () => {
    fc.assert(
      fc.property(fc.oneof(int64, beyondSafe), fc.bigInt({ min: 0n, max: 2n ** 70n }), fc.constantFrom(...shapes), fc.boolean(), (deviceId, id, shape, quoted) => {
        const deviceIdText = quoted ? `"${deviceId}"` : String(deviceId);
        const result = parseNotification(shape(deviceIdText, String(id)));
        expect(result).toMatchObject({ ok: true, notification: { deviceId: String(deviceId), id: String(id) } });
      }),
      propertyRuns(10_000),
    );
  });

  it('refuses device ids outside 1 to 2^63 - 1 and never rounds one into range', () => {
    const outside = fc.oneof(fc.bigInt({ min: MAX_INT64 + 1n, max: 2n ** 80n }), fc.bigInt({ min: -(2n ** 70n), max: 0n }));
    fc.assert(
      fc.property(outside, fc.constantFrom(...shapes), (deviceId, shape) => {
        expect(parseNotification(shape(String(deviceId), '"e"')).ok).toBe(false);
      }),
      propertyRuns(10_000),
    );
  });

  it("reports a motion's detection from its subtype in every shape, and none for another kind", () => {
    // Not the shape without a kind: there a subtype that is no string leaves the payload with none, which is refused.
    const withSubtype = (['flat', 'nested', 'service'] as const).map((shape) => (kind: string, subtype: unknown) => ({
      text: SHAPES[shape]({ deviceId: '1234567', kind, subtype: JSON.stringify(subtype) }),
      reads: readFrom(shape, kind, subtype),
    }));
    const known = fc.constantFrom(...MOTION_SUBTYPES, 'ding', 'package', 'HUMAN', 'Animal', '__proto__', 'toString');
    const kinds = fc.oneof(fc.constantFrom('motion', 'ding'), fc.stringMatching(/^[a-z_]{1,12}$/));
    fc.assert(
      fc.property(fc.constantFrom(...withSubtype), kinds, fc.oneof(known, fc.string(), fc.jsonValue()), (shape, kind, subtype) => {
        const { text, reads } = shape(kind, subtype);
        expect(parseNotification(text)).toEqual({ ok: true, notification: { deviceId: '1234567', ...reads } });
      }),
      propertyRuns(10_000),
    );
  });

  it('never throws, and a refusal never quotes the input', () => {
    const json = fc.json({ depthSize: 'medium' });
    const mutated = fc.tuple(fc.constantFrom(...shapes), int64, fc.string(), fc.nat()).map(([shape, deviceId, junk, at]) => {
      const text = shape(String(deviceId), '"evt-marker"');
      const cut = at % (text.length + 1);
      return text.slice(0, cut) + junk + text.slice(cut);
    });
    fc.assert(
      fc.property(fc.oneof(json, mutated, fc.string({ unit: 'binary' })), (text) => {
        const result = parseNotification(text);
        if (!result.ok) {
          expect(result.reason).toMatch(/^[a-z_./]+( [a-z_./0-9 -]+)*$/i);
          expect(text.length > 12 && result.reason.includes(text)).toBe(false);
        }
      }),
      propertyRuns(10_000),
    );
  });
});
