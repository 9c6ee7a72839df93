import { describe, expect, it } from '@jest/globals';
import { SecretMaskingLogger, stringsIn } from '../src/log.js';
import { createTestLogger } from './support/homebridge-api.js';

describe('SecretMaskingLogger', () => {
  it('masks every registered secret at every level, longest first', () => {
    const target = createTestLogger();
    const log = new SecretMaskingLogger(target);
    log.addSecrets('token-abc', 'token-abc-def', undefined, '012345');

    log.debug('Bearer token-abc-def');
    log.info('code 012345 then token-abc');
    log.warn('token-abc/token-abc');
    log.error('nothing secret');

    expect(target.lines.map(({ level, message }) => `${level}: ${message}`)).toEqual([
      'debug: Bearer ***',
      'info: code *** then ***',
      'warn: ***/***',
      'error: nothing secret',
    ]);
  });

  it('ignores values too short to be secrets, so ordinary words survive', () => {
    const target = createTestLogger();
    const log = new SecretMaskingLogger(target);
    log.addSecrets('', 'a', 'on');

    log.info('Motion at Front Door: on');

    expect(target.lines[0]?.message).toBe('Motion at Front Door: on');
  });
});

describe('stringsIn', () => {
  it('collects nested string values and nothing else', () => {
    expect(stringsIn({ h: 'h1', r: { a: 'a1', l: ['l1'] }, n: 4, z: null })).toEqual(['h1', 'a1', 'l1']);
    expect(stringsIn(undefined)).toEqual([]);
  });
});
