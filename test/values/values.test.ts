import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { hasUserInfo, isListenAddress, isWebAddress, originOf } from '../../src/values/address.js';
import { BackoffDelays, backoffDelay, honouringRetryAfter, type Backoff } from '../../src/values/backoff.js';
import { deviceIdText, isDeviceId } from '../../src/values/json.js';
import { NODE_TOO_OLD_REASON, nodeVersionProblem } from '../../src/values/node-version.js';
import { describeDuration } from '../../src/values/time.js';
import { propertyRuns } from '../support/property-runs.js';

describe('isWebAddress', () => {
  it.each(['https://home.example.com', 'https://home.example.com:1', 'https://home.example.com:65535/base', 'http://[::1]:8080', 'https://[2001:db8::1]'])(
    'takes %s',
    (url) => {
      expect(isWebAddress(url)).toBe(true);
    },
  );

  it.each([
    ['a port past 65535', 'https://home.example.com:99999'],
    ['port 65536', 'https://home.example.com:65536'],
    ['port 0', 'https://home.example.com:0'],
    ['malformed IPv6', 'http://[1::2::3]'],
    ['an IPv4 address out of range', 'https://1.2.3.256'],
    ['no host', 'https://'],
    ['no URL at all', 'home.example.com'],
    ['a user name and password', 'https://user:password@home.example.com'],
    ['a user name', 'https://user@home.example.com'],
    ['a password alone', 'https://:password@home.example.com'],
  ])('refuses %s', (_, url) => {
    expect(isWebAddress(url)).toBe(false);
  });
});

describe('hasUserInfo', () => {
  it('tells an address with a user name or password before its host, and nothing else', () => {
    expect(['https://user:pw@home.example.com', 'https://user@home.example.com', 'https://:pw@home.example.com'].map(hasUserInfo)).toEqual([true, true, true]);
    expect(['https://home.example.com/@user', 'https://home.example.com/?user@x', 'not a url @ all', 'https://@home.example.com'].map(hasUserInfo)).toEqual([false, false, false, false]);
  });
});

describe('isListenAddress', () => {
  it.each(['0.0.0.0', '::', '127.0.0.1', 'fe80::1%eth0', '::ffff:192.168.1.2', 'localhost', 'homebridge.local', 'pi-4.lan.'])('takes %s', (host) => {
    expect(isListenAddress(host)).toBe(true);
  });

  it.each(['', ' ', 'home bridge', '127.0.0.1\u0000', '[::1]', '1::2::3', '1.2.3.256', '-start.example', `${'a'.repeat(64)}.example`, 'a'.repeat(254)])(
    'refuses %j',
    (host) => {
      expect(isListenAddress(host)).toBe(false);
    },
  );
});

describe('originOf', () => {
  it('names where a URL leads without its path, and never throws', () => {
    expect(originOf('https://home.example.com:8443/push/secret')).toBe('https://home.example.com:8443');
    expect(originOf('https://home.example.com:99999')).toBe('an address that is not a URL');
  });
});

/** Doubling backoffs of whole milliseconds, from a first step to a cap at or above it. */
const DOUBLING = fc
  .record({ firstMs: fc.integer({ min: 1, max: 100_000 }), capSteps: fc.integer({ min: 0, max: 30 }), extraMs: fc.integer({ min: 0, max: 100_000 }) })
  .map(({ firstMs, capSteps, extraMs }): Backoff => ({ firstMs, factor: 2, maxMs: Math.min(firstMs * 2 ** capSteps + extraMs, 2 ** 31 - 1), jitter: true }));

/** What Math.random may give, and its two ends. */
const RANDOMS = fc.array(fc.oneof(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.constantFrom(0, 1 - 2 ** -53)), {
  minLength: 1,
  maxLength: 60,
});

/** The steps as the rule states them: the first, then each twice the one before, none past the cap. */
function doublingSteps(backoff: Backoff, count: number): number[] {
  const steps = [Math.min(backoff.firstMs, backoff.maxMs)];
  while (steps.length < count) {
    steps.push(Math.min(steps[steps.length - 1] * 2, backoff.maxMs));
  }
  return steps;
}

/** A random source that gives `values` in turn. */
function playing(values: readonly number[]): () => number {
  let next = 0;
  return () => values[next++ % values.length];
}

describe('BackoffDelays', () => {
  it('waits within the upper half of each step, the steps doubling to the cap', () => {
    fc.assert(
      fc.property(DOUBLING, RANDOMS, (backoff, randoms) => {
        const delays = new BackoffDelays(backoff, playing(randoms));
        const waits = randoms.map(() => delays.next());
        doublingSteps(backoff, randoms.length).forEach((stepMs, failure) => {
          expect(Number.isInteger(waits[failure])).toBe(true);
          expect(waits[failure]).toBeGreaterThanOrEqual(stepMs / 2);
          expect(waits[failure]).toBeLessThanOrEqual(stepMs);
        });
      }),
      propertyRuns(2_000),
    );
  });

  it('waits each whole step without jitter, and starts over from the first after a reset', () => {
    fc.assert(
      fc.property(DOUBLING, fc.integer({ min: 1, max: 40 }), (jittered, failures) => {
        const backoff = { ...jittered, jitter: false };
        const delays = new BackoffDelays(backoff, () => 0);
        const steps = doublingSteps(backoff, failures);
        expect(steps.map(() => delays.next())).toEqual(steps);
        delays.reset();
        expect(delays.next()).toBe(steps[0]);
      }),
      propertyRuns(1_000),
    );
  });
});

describe('backoffDelay', () => {
  const backoff: Backoff = { firstMs: 60_000, factor: 2, maxMs: 3_600_000, jitter: true };

  it('is half the step at 0, three quarters at 0.5, and the whole step at 1', () => {
    expect([0, 0.5, 1].map((random) => backoffDelay(backoff, 1, () => random))).toEqual([60_000, 90_000, 120_000]);
  });

  it('jitters the cap too, so many homes do not fall back in step there', () => {
    expect([0, 1].map((random) => backoffDelay(backoff, 20, () => random))).toEqual([1_800_000, 3_600_000]);
  });
});

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

/**
 * Which Node.js the plugin refuses: older than 22.12, where JSON.parse cannot hand over a number's
 * source text; the words say which one it needs and which one it runs on.
 */
describe('nodeVersionProblem', () => {
  it.each(['20.20.2', '18.0.0', '21.7.3', '22.0.0', '22.11.9'])('refuses Node.js %s, naming the Node.js it needs and this one', (version) => {
    expect(nodeVersionProblem(version)).toBe(`needs Node.js 22.12 or later; this is ${version}`);
  });

  it.each(['22.12.0', '22.22.1', '23.0.0', '24.4.1', '26.0.0'])('takes Node.js %s', (version) => {
    expect(nodeVersionProblem(version)).toBeUndefined();
  });

  it('gives the reason in the words every part of the plugin shows', () => {
    expect(NODE_TOO_OLD_REASON).toBe('this Node.js is too old');
  });

  it('takes the Node.js the tests run on', () => {
    expect(nodeVersionProblem()).toBeUndefined();
  });
});

const MINUTE = 60_000;

describe('describeDuration', () => {
  it('says minutes from one minute up, seconds below, never 0 s', () => {
    expect([describeDuration(MINUTE), describeDuration(120 * MINUTE), describeDuration(1500), describeDuration(10), describeDuration(0)]).toEqual([
      '1 minute',
      '120 minutes',
      '2 s',
      '1 s',
      '1 s',
    ]);
  });

  it('leaves the sign to the sentence: a clock behind by 5 minutes is 5 minutes', () => {
    expect([describeDuration(-5 * MINUTE), describeDuration(-75_000)]).toEqual(['5 minutes', '1 minute']);
  });
});

describe('honouringRetryAfter', () => {
  it('waits the larger of a Retry-After and the backoff, never their sum', () => {
    expect(honouringRetryAfter(1_500, 7_000)).toBe(7_000);
    expect(honouringRetryAfter(1_500, 1_000)).toBe(1_500);
    expect(honouringRetryAfter(1_500, 0)).toBe(1_500);
  });

  it('is the backoff when no Retry-After came', () => {
    expect(honouringRetryAfter(1_500, undefined)).toBe(1_500);
  });
});
