import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '../src/config/parse-config.js';
import { quoteForLog, SecretMaskingLogger, stringsIn } from '../src/log.js';
import { createTestLogger } from '../scripts/lib/homebridge-api.js';
import { loopbackPlatformBlock } from '../scripts/lib/platform-block.js';

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

describe('configured tokens', () => {
  const RELAY_URL = 'http://127.0.0.1:2586';
  const block = (overrides: Record<string, unknown>) =>
    loopbackPlatformBlock(
      { accountUrl: 'http://127.0.0.1:1', doorbellUrl: 'http://127.0.0.1:2', relayUrl: RELAY_URL },
      { name: 'Doorbell Motion', account: { email: 'you@example.com' }, doorbells: [{ deviceId: '1234567' }], motionTimeout: 5 },
      overrides,
    );
  const SETTINGS: Array<[string, (token: string) => Record<string, unknown>]> = [
    ['doorbellAccessToken', (token) => ({ doorbellAccessToken: token })],
    ['push.relayToken', (token) => ({ push: { mode: 'relay', relayUrl: RELAY_URL, relayToken: token } })],
  ];

  it.each(SETTINGS)('%s: the config takes none shorter than the logger masks', (name, setting) => {
    const tokenOf = (length: number) => 'tk_0123456789'.slice(0, length);
    const shortest = [1, 2, 3, 4, 5, 6, 7, 8].find((length) => parseConfig(block(setting(tokenOf(length)))).status === 'ok') ?? 0;
    expect(shortest).toBeGreaterThan(0);
    const target = createTestLogger();
    const log = new SecretMaskingLogger(target);
    log.addSecrets(tokenOf(shortest));

    log.info(`sent ${tokenOf(shortest)}`);

    expect(target.lines[0]?.message).toBe('sent ***');
    expect(parseConfig(block(setting(tokenOf(shortest - 1))))).toMatchObject({
      status: 'invalid',
      problems: [expect.stringContaining(`${name} must be a token`)],
    });
  });
});

describe('stringsIn', () => {
  it('collects nested string values and nothing else', () => {
    expect(stringsIn({ h: 'h1', r: { a: 'a1', l: ['l1'] }, n: 4, z: null })).toEqual(['h1', 'a1', 'l1']);
    expect(stringsIn(undefined)).toEqual([]);
  });
});

describe('quoteForLog', () => {
  it('quotes a short text as a JSON string', () => {
    expect(quoteForLog('motion')).toBe('"motion"');
    expect(quoteForLog('say "hi" \\o/')).toBe('"say \\"hi\\" \\\\o/"');
  });

  it('cuts past 64 characters, with an ellipsis', () => {
    expect(quoteForLog('a'.repeat(64))).toBe(`"${'a'.repeat(64)}"`);
    expect(quoteForLog('a'.repeat(10_000))).toBe(`"${'a'.repeat(64)}…"`);
  });

  it('escapes every character a terminal or log viewer may act on', () => {
    const hostile = 'a\u0000\t\n\r\u001b[31m\u007f\u009b\u2028\u2029\u202e\u2066b';
    expect(quoteForLog(hostile)).toBe('"a\\u0000\\t\\n\\r\\u001b[31m\\u007f\\u009b\\u2028\\u2029\\u202e\\u2066b"');
  });

  it('keeps letters of any language and emoji as they are', () => {
    expect(quoteForLog('Haustür 🚪')).toBe('"Haustür 🚪"');
  });
});
