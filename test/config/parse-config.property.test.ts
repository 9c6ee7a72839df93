/** Properties of the config check over generated blocks, with fast-check. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { EXPECTED } from '../../src/config/messages.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { propertyRuns } from '../support/property-runs.js';

const VALID = {
  platform: 'DoorbellMotion',
  name: 'Doorbell Motion',
  account: { serverUrl: 'https://account.example.com', email: 'you@example.com', country: 'US', countryCode: '1', code: '493817' },
  doorbellServerUrl: 'https://doorbell.example.com',
  doorbells: [{ deviceId: '1234567', name: 'Front Door', motionTimeout: 30, button: true }],
  motionTimeout: 60,
  push: { mode: 'relay', relayUrl: 'https://ntfy.example.org', relayToken: 'tk_x', port: 47850, host: '0.0.0.0', publicUrl: 'https://h.example.com' },
};

/** Every place in VALID that holds a value, as a path. */
function pathsOf(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) {
    return [path];
  }
  return [path, ...Object.entries(value).flatMap(([key, child]) => pathsOf(child, [...path, Array.isArray(value) ? Number(key) : key]))];
}

const PATHS = pathsOf(VALID).filter((path) => path.length > 0 && path[0] !== 'platform');

/** `block` with the value at `path` replaced (undefined removes it); unchanged when an earlier change removed the path. */
function withValueAt(block: unknown, path: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(block) as Record<string | number, unknown>;
  let parent: unknown = copy;
  for (const key of path.slice(0, -1)) {
    parent = typeof parent === 'object' && parent !== null ? (parent as Record<string | number, unknown>)[key] : undefined;
  }
  if (typeof parent !== 'object' || parent === null) {
    return block;
  }
  const last = path[path.length - 1] as string | number;
  if (value === undefined) {
    delete (parent as Record<string | number, unknown>)[last];
  } else {
    (parent as Record<string | number, unknown>)[last] = value;
  }
  return copy;
}

/** How a problem line may start: a setting as written in config.json (`doorbells[1].deviceId`). */
function namesSetting(message: string): boolean {
  const [first] = message.split(' ');
  const generic = first.replace(/\[\d+\]/g, '[]');
  return generic in EXPECTED || message.endsWith(' is not a known setting') || message === 'account is required unless doorbellAccessToken is set';
}

const anyValue = fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.integer(), fc.string(), fc.constant(2 ** 60));

describe('parseConfig, for any block', () => {
  it('never throws, and names a setting in every problem without quoting a secret', () => {
    const mutatedBlock = fc
      .array(fc.tuple(fc.constantFrom(...PATHS), anyValue), { minLength: 1, maxLength: 4 })
      .map((changes) => changes.reduce<unknown>((block, [path, value]) => withValueAt(block, path, value), VALID));
    const extraKeys = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue(), { maxKeys: 3 }).map((extra) => ({ ...VALID, ...extra }));
    fc.assert(
      fc.property(fc.oneof(mutatedBlock, extraKeys, fc.jsonValue(), fc.anything()), (block) => {
        const result = parseConfig(block);
        if (result.status === 'unconfigured') {
          return;
        }
        for (const problem of result.problems) {
          expect([problem, namesSetting(problem) || problem.startsWith('the DoorbellMotion platform block')]).toEqual([problem, true]);
          expect(problem).not.toContain('493817');
          expect(problem).not.toContain('tk_x');
        }
        if (result.status === 'ok') {
          expect(result.settings.doorbells.length).toBeGreaterThan(0);
        }
      }),
      propertyRuns(10_000),
    );
  });
});
