import { describe, expect, it } from '@jest/globals';
import { parseNotification } from '../../src/push/notification.js';
import type { DoorbellNotification } from '../../src/push/notification.js';
import { PAYLOADS } from '../support/notification-payloads.js';

function parsed(text: string): DoorbellNotification {
  const result = parseNotification(text);
  if (!result.ok) {
    throw new Error(`expected a notification, got: ${result.reason}`);
  }
  return result.notification;
}

function rejection(text: string): string {
  const result = parseNotification(text);
  if (result.ok) {
    throw new Error(`expected a rejection, got ${JSON.stringify(result.notification)}`);
  }
  return result.reason;
}

describe('parseNotification', () => {
  it('reads the flat shape', () => {
    const flat = '{"device_id": 1234567, "kind": "motion", "id": "evt-1", "created_at": "2026-11-22T10:00:00Z"}';
    expect(parsed(flat)).toEqual({
      deviceId: '1234567',
      kind: 'motion',
      id: 'evt-1',
    });
  });

  it('reads the nested shape, keeping every digit of a large integer id', () => {
    expect(parsed('{"ding": {"doorbot_id": 1234567, "kind": "motion", "id": 6975233002112450000}}')).toEqual({
      deviceId: '1234567',
      kind: 'motion',
      id: '6975233002112450000',
    });
  });

  it('never takes the relay time a ring is limited by from the body, which any sender writes', () => {
    expect(parsed('{"device_id": 1234567, "kind": "ding", "relayTime": 9999999999, "time": 9999999999}')).toEqual({ deviceId: '1234567', kind: 'ding' });
  });

  it('tolerates other keys, nested objects included', () => {
    const text = '{"action": "x", "ding": {"doorbot_id": "42", "kind": "ding", "extra": {"a": [1, 2.5]}}, "n": 1e400}';
    expect(parsed(text)).toEqual({ deviceId: '42', kind: 'ding' });
  });

  it('reads device ids above 2^53 exactly from the raw text', () => {
    expect(parsed('{"device_id": 9007199254740993, "kind": "motion"}').deviceId).toBe('9007199254740993');
    expect(parsed('{"device_id": 9223372036854775807, "kind": "motion"}').deviceId).toBe('9223372036854775807');
    expect(parsed('{"device_id": "9007199254740993", "kind": "motion"}').deviceId).toBe('9007199254740993');
  });

  it('rejects device ids that are not integers from 1 to 2^63 - 1', () => {
    const bad = ['0', '-5', '1234567.0', '1e6', '9223372036854775808', '"01"', '"1e6"', '""', 'true', 'null', '[1]', '{}'];
    for (const value of bad) {
      expect(rejection(`{"device_id": ${value}, "kind": "motion"}`)).toMatch(/device_id/);
    }
    expect(rejection('{"kind": "motion"}')).toMatch(/device_id/);
  });

  it.each(PAYLOADS.map((payload) => [payload.shape, payload.kind, payload.subtype ?? 'none', payload] as const))(
    'reads the %s shape of kind %s, subtype %s: its kind, and a detection only for a motion',
    (_shape, _kind, _subtype, { text, reads }) => {
      expect(parsed(text('1234567', '"e"'))).toEqual({ deviceId: '1234567', id: 'e', ...reads });
    },
  );

  it.each([
    ['package_delivery', 'package'],
    ['package_pickup', 'package'],
    ['animal', 'animal'],
  ])('reads the subtype %s as a motion that saw a %s, beside the kind in each shape and standing for it', (subtype, detection) => {
    const motion = { deviceId: '1234567', kind: 'motion', id: 'e', detection };
    expect(parsed(`{"device_id": 1234567, "kind": "motion", "subtype": "${subtype}", "id": "e"}`)).toEqual(motion);
    expect(parsed(`{"ding": {"doorbot_id": 1234567, "kind": "motion", "subtype": "${subtype}", "id": "e"}}`)).toEqual(motion);
    expect(parsed(`{"device_id": 1234567, "subtype": "${subtype}", "id": "e"}`)).toEqual(motion);
    expect(parsed(`{"ding": {"doorbot_id": 1234567, "subtype": "${subtype}", "id": "e"}}`)).toEqual(motion);
    const service = `{"android_config": {"category": "com.ring.pn.live-event.motion"}, "data": {"device": {"id": 1234567}, "event": {"ding": {"id": "e", "subtype": "${subtype}"}}}}`;
    expect(parsed(service)).toEqual(motion);
    // A ring with the subtype beside it is still a ring, and sees nothing.
    expect(parsed(`{"device_id": 1234567, "kind": "ding", "subtype": "${subtype}", "id": "e"}`)).toEqual({ deviceId: '1234567', kind: 'ding', id: 'e' });
  });

  it('takes a motion without a known subtype as plain motion, and an unknown subtype alone as its own kind', () => {
    for (const subtype of ['', ', "subtype": "package"', ', "subtype": 5', ', "subtype": null', ', "subtype": {"a": 1}', ', "subtype": "constructor"', ', "subtype": "Human"']) {
      expect([subtype, parsed(`{"device_id": 1, "kind": "motion"${subtype}}`)]).toEqual([subtype, { deviceId: '1', kind: 'motion' }]);
    }
    expect(parsed('{"device_id": 1, "subtype": "package"}')).toEqual({ deviceId: '1', kind: 'package' });
  });

  it('rejects a missing, empty or non-string kind', () => {
    for (const kind of ['', ', "kind": ""', ', "kind": 5', ', "kind": null', ', "kind": ["x"]', ', "subtype": {}']) {
      expect(rejection(`{"device_id": 1${kind}}`)).toMatch(/kind/);
    }
  });

  it('reads a string id and an integer id as the same id', () => {
    expect(parsed('{"device_id": 1, "kind": "motion", "id": 7}').id).toBe('7');
    expect(parsed('{"device_id": 1, "kind": "motion", "id": "7"}').id).toBe('7');
    expect(parsed('{"device_id": 1, "kind": "motion", "id": -3}').id).toBe('-3');
  });

  it('rejects an id that is neither a string nor an integer', () => {
    for (const id of ['7.0', '7.5', '1e3', 'true', 'null', '{}', '[7]']) {
      expect(rejection(`{"device_id": 1, "kind": "motion", "id": ${id}}`)).toMatch(/\bid\b/);
    }
  });

  it('rejects bodies that are not JSON objects', () => {
    for (const text of ['[]', '[{"device_id": 1, "kind": "motion"}]', '5', '"text"', 'null', 'true']) {
      expect(rejection(text)).toBe('body is not a JSON object');
    }
  });

  it('rejects invalid JSON without echoing it', () => {
    const invalidJson = ['', '{', '{"device_id": 1, "kind": "motion",}', "{'a': 1}", 'NaN', '{"a": 01}', 'plain words'];
    for (const text of invalidJson) {
      expect(rejection(text)).toBe('body is not valid JSON');
    }
  });

  it('rejects absurdly deep nesting instead of throwing', () => {
    const depth = 100_000;
    expect(rejection(`{"x": ${'['.repeat(depth)}${']'.repeat(depth)}}`)).toBe('JSON is nested too deeply');
  });

  it('uses the nested object only when "ding" is an object', () => {
    expect(parsed('{"device_id": 5, "kind": "motion", "ding": "yes"}').deviceId).toBe('5');
    expect(rejection('{"device_id": 5, "kind": "motion", "ding": {}}')).toMatch(/device_id/);
  });

  describe("the doorbell service's own payload", () => {
    const payload = (category: unknown, subtype: unknown, deviceId: unknown = 1234567, dingId: unknown = '6975233002112450000') =>
      JSON.stringify({
        android_config: { category, priority: 'high' },
        data: { device: { id: deviceId, kind: 'doorbell_v3' }, event: { ding: { id: dingId, subtype, created_at: '2026-11-22T10:00:00Z' } } },
      });

    /** What a detection may be called, none at all and a value of another type included: other keys are tolerated. */
    const SUBTYPES = ['human', 'vehicle', 'package_delivery', 'package_pickup', 'animal', 'other_motion', 'motion', 'ding', 'package', undefined, 5];

    /** The detection each subtype reports in a motion; the rest are plain motion. */
    const DETECTION_OF: Record<string, string> = { human: 'person', vehicle: 'vehicle', package_delivery: 'package', package_pickup: 'package', animal: 'animal', other_motion: 'other' };

    it.each(['motion', 'ding', 'intercom_unlock'])('takes the kind %s from the category, whatever the subtype says', (kind) => {
      // A person or a vehicle seen (category motion) is a motion; a ring with a detection beside it is still a ring.
      for (const subtype of SUBTYPES) {
        const detection = kind === 'motion' && typeof subtype === 'string' ? DETECTION_OF[subtype] : undefined;
        expect([subtype, parsed(payload(`com.ring.pn.live-event.${kind}`, subtype))]).toEqual([
          subtype,
          { deviceId: '1234567', kind, id: '6975233002112450000', ...(detection && { detection }) },
        ]);
      }
    });

    it('never lets the subtype stand in for a missing category', () => {
      for (const subtype of ['motion', 'human', 'ding']) {
        expect(rejection(payload(undefined, subtype))).toBe('android_config.category is missing or not a non-empty string');
      }
    });

    it('keeps a device id above 2^53 and an integer event id exact', () => {
      // Written as JSON integers: the placeholders are replaced by digits a JS number cannot hold.
      const text = payload('com.ring.pn.live-event.motion', 'human', 'DEVICE', 'EVENT')
        .replace('"DEVICE"', '9007199254740993')
        .replace('"EVENT"', '6975233002112450001');
      expect(parsed(text)).toMatchObject({ deviceId: '9007199254740993', id: '6975233002112450001' });
    });

    it('names the field of this shape that is wrong', () => {
      expect(rejection(payload(undefined, 'human'))).toBe('android_config.category is missing or not a non-empty string');
      expect(rejection(payload('com.ring.pn.live-event.', 'human'))).toBe('android_config.category is missing or not a non-empty string');
      expect(rejection(payload('com.ring.pn.live-event.motion', 'human', 'front'))).toBe(
        'data.device.id is missing or not an integer from 1 to 9223372036854775807',
      );
      expect(rejection(payload('com.ring.pn.live-event.motion', 'human', 1, 1.5))).toBe('data.event.ding.id is neither a string nor an integer');
    });
  });
});
