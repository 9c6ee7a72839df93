/**
 * Properties of the config check over generated blocks, with fast-check. What a setting is comes from
 * config.schema.json itself, the file the Homebridge UI draws its form from, never from the plugin.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectation } from '../../src/config/messages.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { REPO_ROOT } from '../../scripts/lib/paths.js';
import { configAjv, configSchema, withoutAnnotations } from '../../scripts/lib/validators.js';
import { pushAddressWarnings } from '../../src/config/push-settings.js';
import { parseSignInFields } from '../../src/config/sign-in-fields.js';
import { directPushToken } from '../../src/push/notification.js';
import { isWebAddress } from '../../src/values/address.js';
import { describeSignInFailure } from '../../homebridge-ui/sign-in-failure.js';
import { platformBlock } from '../support/config-arbitrary.js';
import { propertyRuns } from '../support/property-runs.js';
import { goodUrl, ODD_URLS } from '../support/typed-values.js';

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  required?: string[];
  /** At the top of the block: what the one account there requires, when the block has no `accounts`. */
  then?: { required?: string[] };
}

const SCHEMA = (JSON.parse(readFileSync(join(REPO_ROOT, 'config.schema.json'), 'utf8')) as { schema: SchemaNode }).schema;

/** A setting as a path; `[]` stands for any index of a list, as in `doorbells[].deviceId`. */
type SchemaPath = Array<string | '[]'>;

interface Setting {
  path: SchemaPath;
  node: SchemaNode;
  /** Its parent requires it; a list's items count as required. */
  required: boolean;
}

/** Every setting the schema declares, and every list's items. */
function settingsOf(node: SchemaNode, path: SchemaPath = []): Setting[] {
  const items = node.items === undefined ? [] : [{ path: [...path, '[]'], node: node.items, required: true }, ...settingsOf(node.items, [...path, '[]'])];
  const properties = Object.entries(node.properties ?? {}).flatMap(([key, child]) => [
    { path: [...path, key], node: child, required: [...(node.required ?? []), ...(node.then?.required ?? [])].includes(key) },
    ...settingsOf(child, [...path, key]),
  ]);
  return [...items, ...properties];
}

/** `doorbells[].deviceId`: how a setting is written, any index as `[]`. */
function nameOf(path: ReadonlyArray<string | number>): string {
  return path.map((part, i) => (part === '[]' || typeof part === 'number' ? '[]' : i === 0 ? part : `.${part}`)).join('');
}

const SETTINGS = settingsOf(SCHEMA);
const SETTING_NAMES = new Set(SETTINGS.map(({ path }) => nameOf(path)));
/** The block itself ('') and each object setting, with the keys each declares. */
const OBJECTS = [{ path: [], node: SCHEMA }, ...SETTINGS].flatMap(({ path, node }) => (node.properties ? [{ name: nameOf(path), keys: Object.keys(node.properties) }] : []));

/** A problem names a setting as config.json writes it (`doorbells[1].deviceId`), one the schema declares. */
function namesSetting(message: string): boolean {
  return SETTING_NAMES.has(message.split(' ')[0].replace(/\[\d+\]/g, '[]'));
}

/** A warning names a key the schema does not know where it stands, and says it is ignored. */
function namesUnknownKey(message: string): boolean {
  const unknown = /^(.*) is not a known setting; it is ignored$/.exec(message);
  if (unknown === null) {
    return false;
  }
  const name = unknown[1].replace(/\[\d+\]/g, '[]');
  return OBJECTS.some(({ name: object, keys }) => {
    const prefix = object === '' ? '' : `${object}.`;
    // A key that is not a plain name is quoted after its parent's name (`account[""]`), which the top level's check covers.
    return name.startsWith(prefix) && !keys.includes(name.slice(prefix.length));
  });
}

const VALID = {
  platform: 'DoorbellMotion',
  name: 'Doorbell Motion',
  account: { serverUrl: 'https://account.example.com', email: 'you@example.com', country: 'US', countryCode: '1', code: '493817', majorVersion: 14, minorVersion: 0 },
  doorbellServerUrl: 'https://doorbell.example.com',
  doorbells: [{ deviceId: '1234567', name: 'Front Door', motionTimeout: 30, button: true }],
  motionTimeout: 60,
  push: { mode: 'relay', relayUrl: 'https://ntfy.example.org', relayToken: 'tk_x', port: 47850, host: '0.0.0.0', publicUrl: 'https://h.example.com', service: 'webhook', os: 'linux', dictVersion: '2.0.0' },
};

/** Every setting of the schema at a place in a block: the first doorbell stands for any. */
const PLACES = SETTINGS.filter(({ path }) => path.at(-1) !== '[]').map(({ path, required }) => ({ place: path.map((part) => (part === '[]' ? 0 : part)), required }));

/** `block` with the value at `place` replaced (undefined removes it); unchanged when an earlier change removed its parent. */
function withValueAt(block: unknown, place: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(block) as Record<string | number, unknown>;
  const parent = place.slice(0, -1).reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>)[key] : undefined), copy);
  if (typeof parent !== 'object' || parent === null) {
    return block;
  }
  const last = place[place.length - 1];
  if (value === undefined) {
    delete (parent as Record<string | number, unknown>)[last];
  } else {
    (parent as Record<string | number, unknown>)[last] = value;
  }
  return copy;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const keysOf = (object: string) => OBJECTS.find(({ name }) => name === object)?.keys ?? [];

/**
 * Nothing but what Homebridge keeps in every block, a name, keys the schema does not know, and the
 * account version numbers the Homebridge UI's form saves by itself: such a block is not configured
 * yet. Anything more is.
 */
function nothingConfigured(block: unknown): boolean {
  const unknownOr = (object: string, allowed: string[]) => (key: string) => !keysOf(object).includes(key) || allowed.includes(key);
  return (
    isObject(block) &&
    Object.entries(block).every(
      ([key, value]) => unknownOr('', ['name'])(key) || (key === 'account' && isObject(value) && Object.keys(value).every(unknownOr('account', ['majorVersion', 'minorVersion']))),
    )
  );
}

const anyValue = fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.integer(), fc.string(), fc.constant(2 ** 60));
const mutatedBlock = fc
  .array(fc.tuple(fc.constantFrom(...PLACES), anyValue), { minLength: 1, maxLength: 4 })
  .map((changes) => changes.reduce<unknown>((block, [{ place }, value]) => withValueAt(block, place, value), VALID));
const extraKeys = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue(), { maxKeys: 3 }).map((extra) => ({ ...VALID, ...extra }));
/** What a block holds before anyone configured it, sometimes with one setting more. */
const bareBlock = fc
  .record(
    {
      platform: fc.constant('DoorbellMotion'),
      name: fc.string(),
      _bridge: fc.record({ username: fc.string(), port: fc.integer() }),
      account: fc.record({ majorVersion: fc.nat(), minorVersion: fc.nat() }, { requiredKeys: [] }),
    },
    { requiredKeys: ['platform'] },
  )
  .chain((block) => fc.option(fc.tuple(fc.constantFrom(...PLACES), fc.jsonValue()), { nil: undefined }).map((more) => (more === undefined ? block : withValueAt(block, [more[0].place[0]], more[1]))));
/** VALID without any choice of the settings the schema leaves optional: still valid, with every default. */
const withoutOptional = fc
  .subarray(PLACES.filter(({ required, place }) => !required && place[0] !== 'account'))
  .map((removed) => removed.reduce<unknown>((block, { place }) => withValueAt(block, place, undefined), VALID));

describe('parseConfig, for any block', () => {
  it('says for every setting the schema declares what it must be, in words made from the schema', () => {
    expect(SETTINGS.length).toBeGreaterThan(25);
    expect(SETTINGS.filter(({ node }) => expectation(node) === undefined).map(({ path }) => nameOf(path))).toEqual([]);
  });

  it('never throws, is unconfigured exactly when nothing is configured, and names a setting in every problem and warning without quoting a secret', () => {
    fc.assert(
      fc.property(fc.oneof(mutatedBlock, extraKeys, bareBlock, fc.jsonValue(), fc.anything()), (block) => {
        const result = parseConfig(block);

        expect(result.status === 'unconfigured').toBe(nothingConfigured(block));
        for (const warning of result.warnings) {
          // A key the schema does not know, or a setting that changes nothing where it stands (minutes without their switch).
          expect([warning, namesUnknownKey(warning) || (namesSetting(warning) && warning.includes(' is ignored'))]).toEqual([warning, true]);
          expect(warning).not.toContain('493817');
        }
        if (result.status === 'unconfigured') {
          return;
        }
        if (result.status === 'invalid') {
          expect(result.problems.length).toBeGreaterThan(0);
        }
        for (const problem of result.problems) {
          expect([problem, namesSetting(problem) || (!isObject(block) && problem === 'the DoorbellMotion platform block must be a JSON object')]).toEqual([problem, true]);
          expect(problem).not.toContain('493817');
          expect(problem).not.toContain('tk_x');
        }
        if (result.status === 'ok') {
          expect(result.settings.doorbells.length).toBeGreaterThan(0);
          // Only doorbell entries may be left out of a block that is otherwise usable.
          expect(result.problems.filter((problem) => !problem.startsWith('doorbells['))).toEqual([]);
        }
      }),
      propertyRuns(6_000),
    );
  }, 60_000);

  it('lets only addresses through that every later step can use: a URL with a port from 1 to 65535', () => {
    fc.assert(
      fc.property(platformBlock({ ownPort: 47850 }), ({ block }) => {
        const result = parseConfig(block);
        if (result.status !== 'ok') {
          return;
        }
        const { account, doorbellServerUrl, push } = result.settings;
        const addresses = [account?.serverUrl, doorbellServerUrl, push.relay.relayUrl, push.direct.publicUrl, directPushToken(push.direct.publicUrl, 'x'.repeat(43))];
        for (const address of addresses.filter((value) => value !== undefined)) {
          expect(() => new URL(address)).not.toThrow();
          expect(Number(new URL(address).port || 443)).toBeGreaterThanOrEqual(1);
        }
        expect(() => pushAddressWarnings(push)).not.toThrow();
      }),
      propertyRuns(5_000),
    );
  }, 60_000);

  it("takes from the settings page's sign-in form only an account server a request can be sent to, and never throws", () => {
    const text = fc.oneof(ODD_URLS, goodUrl(47850, false), fc.string(), fc.jsonValue());
    const fields = fc.record({ serverUrl: text, email: fc.oneof(fc.constant('you@example.com'), fc.string()), country: fc.constantFrom('US', 'us', 1), countryCode: fc.constantFrom('1', '49', 49), code: fc.constantFrom('012345', 12345, '') }, { requiredKeys: [] });
    fc.assert(
      fc.property(fields, fc.option(fc.jsonValue()), (form, configuredAccount) => {
        const parsed = parseSignInFields(form, configuredAccount);
        if (parsed.status === 'ok') {
          expect(isWebAddress(parsed.request.serverUrl)).toBe(true);
          expect(() => describeSignInFailure(new Error('x'), parsed.request.serverUrl)).not.toThrow();
        }
      }),
      propertyRuns(5_000),
    );
  });

  it('accepts the block without any of the optional settings, with no problem', () => {
    fc.assert(
      fc.property(withoutOptional, (block) => {
        expect(parseConfig(block)).toMatchObject({ status: 'ok', problems: [] });
      }),
      propertyRuns(5_000),
    );
  });
});

describe('the schema compiled without the words of the form', () => {
  it('keeps every rule: the same answer and the same errors as config.schema.json itself, for any block', () => {
    const full = configAjv().compile(configSchema());
    const compiled = configAjv().compile(withoutAnnotations(configSchema()));
    const outcome = (check: typeof full, block: unknown) => {
      const data = structuredClone(block);
      const valid = check(data);
      return { valid, data, errors: (check.errors ?? []).map(({ keyword, instancePath, schemaPath }) => `${keyword} ${instancePath} ${schemaPath}`) };
    };
    fc.assert(
      fc.property(platformBlock({ ownPort: 47850 }), ({ block }) => {
        expect(outcome(compiled, block)).toEqual(outcome(full, block));
      }),
      propertyRuns(2_000),
    );
  });

  it('has none of those words left, at any depth', () => {
    const text = JSON.stringify(withoutAnnotations(configSchema()));
    expect(JSON.stringify(configSchema())).toMatch(/"(title|description|placeholder|x-must-be)"/);
    expect(text).not.toMatch(/"(title|description|placeholder|x-must-be|\$comment|condition|functionBody|titleMap|x-schema-form)"/);
    expect(text).toMatch(/"x-address"/);
  });
});
