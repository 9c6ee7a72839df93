import { describe, expect, it } from '@jest/globals';
import { isDeviceId } from '../../src/values/device-id.js';

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
