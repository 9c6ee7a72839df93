import { describe, expect, it } from '@jest/globals';
import { deviceIdText, isDeviceId } from '../../src/values/device-id.js';

describe('isDeviceId', () => {
  it('accepts canonical decimal strings up to the int64 maximum', () => {
    expect(isDeviceId('1')).toBe(true);
    expect(isDeviceId('9007199254740993')).toBe(true);
    expect(isDeviceId('9223372036854775807')).toBe(true);
  });

  it('rejects zero, leading zeros, signs, overflow and non-strings', () => {
    for (const bad of ['0', '01', '-1', '+1', '1.0', ' 1', '9223372036854775808', '99999999999999999999', '']) {
      expect(isDeviceId(bad)).toBe(false);
    }
    expect(isDeviceId(42)).toBe(false);
    expect(isDeviceId(undefined)).toBe(false);
  });
});

describe('deviceIdText', () => {
  it('writes a safe JSON integer as its digits, and leaves text as it is', () => {
    expect(deviceIdText(1234567)).toBe('1234567');
    expect(deviceIdText(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(deviceIdText('9007199254740993')).toBe('9007199254740993');
  });

  it('leaves what cannot be an exact id for the check to reject', () => {
    // 9007199254740993 as a JSON number has already become ...992: its digits are not the id's.
    for (const value of [9007199254740992, 1.5, -0.5, Number.NaN, null, undefined, { id: 1 }]) {
      expect(deviceIdText(value)).toBe(value);
    }
    expect(isDeviceId(deviceIdText(9007199254740992))).toBe(false);
    expect(isDeviceId(deviceIdText(-4))).toBe(false);
  });
});
