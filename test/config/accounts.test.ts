/**
 * The `accounts` shape of the platform block: several accounts, each with its own doorbells, and each
 * account's key. Fixed keys below were computed outside the plugin, with
 * `printf '%s' '<origin> <id>' | sha256sum` (and `printf '%s' '<token>' | sha256sum` for a token's id).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { accountKey } from '../../src/values/address.js';
import { type ConfigResult, type ParsedAccount, parseConfig } from '../../src/config/parse-config.js';
import { propertyRuns } from '../support/property-runs.js';

const LAN = { networkInterfaces: () => ({}), platform: 'linux' };

const schema = (JSON.parse(readFileSync(new URL('../../config.schema.json', import.meta.url), 'utf8')) as { schema: { properties: Record<string, Record<string, unknown>> } }).schema;

function account(email: string, serverUrl = 'https://account.example.com') {
  return { serverUrl, email, country: 'US', countryCode: '1' };
}

function entry(label: string | undefined, email: string, ...deviceIds: string[]) {
  return {
    ...(label === undefined ? {} : { label }),
    account: account(email),
    doorbellServerUrl: 'https://doorbell.example.com',
    doorbells: deviceIds.map((deviceId) => ({ deviceId })),
  };
}

function block(...accounts: unknown[]) {
  return { platform: 'DoorbellMotion', name: 'Doorbell Motion', accounts };
}

function ok(result: ConfigResult) {
  if (result.status !== 'ok') {
    throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  }
  return result;
}

const labelsOf = (accounts: ParsedAccount[]) => accounts.map(({ label }) => label);
const idsOf = (accounts: ParsedAccount[]) => accounts.map(({ doorbells }) => doorbells.map(({ deviceId }) => deviceId));

describe('accountKey', () => {
  it('is made from the account server origin and the e-mail in lower case', () => {
    // printf '%s' 'https://account.example.com user@example.com' | sha256sum
    expect(accountKey({ account: account('User@Example.com') })).toBe('2d56ab66ba71');
    expect(accountKey({ account: account('user@example.com', 'https://ACCOUNT.example.com:443/api/') })).toBe('2d56ab66ba71');
    // printf '%s' 'http://127.0.0.1:8080 user@example.com' | sha256sum
    expect(accountKey({ account: account('user@example.com', 'http://127.0.0.1:8080/x') })).toBe('6bb0992d84ff');
  });

  it('is made from the doorbell server origin and the token digest when a token is set, which wins over the account', () => {
    // printf '%s' 'tk-abcdef' | sha256sum, then printf '%s' 'https://doorbell.example.com <that digest>' | sha256sum
    const expected = '0211f19fb066';
    expect(accountKey({ doorbellServerUrl: 'https://doorbell.example.com/v1', doorbellAccessToken: 'tk-abcdef' })).toBe(expected);
    expect(accountKey({ account: account('user@example.com'), doorbellServerUrl: 'https://doorbell.example.com', doorbellAccessToken: 'tk-abcdef' })).toBe(expected);
  });

  it('is undefined without an identity or with an address that does not parse', () => {
    expect(accountKey({})).toBeUndefined();
    expect(accountKey({ doorbellAccessToken: 'tk-abcdef' })).toBeUndefined();
    expect(accountKey({ account: account('user@example.com', 'not a url') })).toBeUndefined();
  });
});

describe('parseConfig: accounts', () => {
  it('lists each entry as an account in config order, with its key, folder and doorbells, and gives the block the first one', () => {
    const result = ok(parseConfig(block(entry('Cabin', 'user@example.com', '1'), entry(' Home ', 'other@example.com', '2', '3')), LAN));
    expect(result.problems).toEqual([]);
    expect(result.accounts.map(({ label, key, folder, fault }) => ({ label, key, folder, fault }))).toEqual([
      { label: 'Cabin', key: '2d56ab66ba71', folder: 'accounts/2d56ab66ba71', fault: undefined },
      { label: 'Home', key: accountKey({ account: account('other@example.com') }), folder: `accounts/${accountKey({ account: account('other@example.com') })}`, fault: undefined },
    ]);
    expect(idsOf(result.accounts)).toEqual([['1'], ['2', '3']]);
    expect(result.accounts[1].doorbells[0]).toMatchObject({ name: 'Doorbell 2', motionTimeout: 60, button: true, detections: [] });
    expect(result.settings).toMatchObject({ account: { email: 'user@example.com', majorVersion: 14 }, doorbellServerUrl: 'https://doorbell.example.com', doorbells: [{ deviceId: '1' }] });
  });

  it('yields one account without a label for the block without accounts, with the settings of today', () => {
    const top = { platform: 'DoorbellMotion', name: 'x', account: account('user@example.com'), doorbellServerUrl: 'https://doorbell.example.com/', doorbells: [{ deviceId: '7' }] };
    const result = ok(parseConfig(top, LAN));
    expect(result.accounts).toEqual([{ label: undefined, key: '2d56ab66ba71', folder: '', account: result.settings.account, doorbellServerUrl: 'https://doorbell.example.com', doorbells: result.settings.doorbells }]);
    expect(result.notes).toEqual([]);
  });

  it('labels an entry without one Account <n>, the smallest n no other entry uses, in any case', () => {
    const result = ok(parseConfig(block(entry(undefined, 'a@example.com'), entry('account 1', 'b@example.com'), entry(undefined, 'c@example.com'), entry('Account 3', 'd@example.com')), LAN));
    expect(labelsOf(result.accounts)).toEqual(['Account 2', 'account 1', 'Account 4', 'Account 3']);
  });

  it('refuses accounts beside any of the top-level account keys, naming both', () => {
    const withTop = { ...block(entry('Cabin', 'a@example.com', '1')), doorbellServerUrl: 'https://doorbell.example.com', doorbells: [{ deviceId: '2' }] };
    expect(parseConfig(withTop, LAN)).toEqual({
      status: 'invalid',
      problems: [
        "doorbellServerUrl and accounts cannot both be set: with accounts, each account's doorbellServerUrl goes in its entry of accounts",
        "doorbells and accounts cannot both be set: with accounts, each account's doorbells goes in its entry of accounts",
      ],
      warnings: [],
    });
  });

  it('names an unknown key inside an entry with its path, and ignores it', () => {
    const result = ok(parseConfig(block(entry('A', 'a@example.com', '1'), { ...entry('B', 'b@example.com', '2'), push: {} }), LAN));
    expect(result.warnings).toEqual(['accounts[1].push is not a known setting; it is ignored']);
    expect(result.problems).toEqual([]);
  });

  it('leaves out a bad entry, a repeated label or the same account again, naming each; the others work and the left-out doorbells are still listed', () => {
    const result = ok(
      parseConfig(
        block(
          entry('Cabin', 'a@example.com', '1'),
          { ...entry('Bad', 'b@example.com', '2'), doorbellServerUrl: 'ftp://x' },
          entry('CABIN', 'c@example.com', '3'),
          entry('Other', 'A@EXAMPLE.com', '4'),
          entry('Home', 'd@example.com', '5'),
        ),
        LAN,
      ),
    );
    expect(result.problems).toEqual([
      'accounts[1].doorbellServerUrl must be an https:// address (http:// only for localhost), with a port from 1 to 65535 if it has one',
      'accounts[2].label repeats accounts[0].label: each account needs its own label, so this account is left out',
      'accounts[3] is the same account as accounts[0] (the same account server and e-mail, or doorbell server and access token): each account is listed once, so this one is left out',
    ]);
    expect(result.accounts.map(({ label, fault }) => [label, fault !== undefined])).toEqual([
      ['Cabin', false],
      ['Bad', true],
      ['CABIN', true],
      ['Other', true],
      ['Home', false],
    ]);
    expect(result.accounts[1]).toMatchObject({ fault: result.problems[0], key: undefined });
    expect(result.accounts[1]).not.toHaveProperty('doorbellServerUrl');
    expect(idsOf(result.accounts)).toEqual([['1'], ['2'], ['3'], ['4'], ['5']]);
  });

  it('is invalid when no entry is usable', () => {
    expect(parseConfig(block({ label: 'A', doorbells: [] }, { label: 'x', doorbellServerUrl: 'https://doorbell.example.com' }), LAN)).toMatchObject({
      status: 'invalid',
      problems: [
        'accounts[0].account is required unless accounts[0].doorbellAccessToken is set',
        'accounts[0].doorbellServerUrl is required',
        'accounts[1].account is required unless accounts[1].doorbellAccessToken is set',
        'accounts must be a list of 1 to 20 accounts, at least one of them valid',
      ],
    });
    expect(parseConfig(block({ doorbells: [] }), LAN)).toMatchObject({
      status: 'invalid',
      problems: ['accounts[0].doorbellServerUrl is required', 'accounts must be a list of 1 to 20 accounts, at least one of them valid'],
    });
  });

  it("requires a doorbell's deviceId in an account, but leaves out the form's blank doorbell without a word", () => {
    const blank = { button: true, chimeSwitch: false, motionSwitch: false, detections: [] };
    const result = ok(parseConfig(block({ ...entry('A', 'a@example.com'), doorbells: [blank, { name: 'Porch' }, { deviceId: '4' }] }, { ...entry('B', 'b@example.com'), doorbells: [blank] }), LAN));
    expect(result.problems).toEqual(['accounts[0].doorbells[1].deviceId is required']);
    expect(idsOf(result.accounts)).toEqual([['4'], []]);
    expect(result.notes).toEqual(["accounts[1] (B) has no doorbells yet: add them from its account's doorbells on the settings page"]);
  });

  it('takes an entry with no doorbells yet, with one info line', () => {
    const result = ok(parseConfig(block(entry('Cabin', 'a@example.com', '1'), entry('New', 'b@example.com')), LAN));
    expect(result.notes).toEqual(["accounts[1] (New) has no doorbells yet: add them from its account's doorbells on the settings page"]);
    expect(result.problems).toEqual([]);
  });

  it('serves a device id configured in two accounts by the first, with a warning', () => {
    const result = ok(parseConfig(block(entry('A', 'a@example.com', '1', '2'), entry('B', 'b@example.com', '3', '2')), LAN));
    expect(idsOf(result.accounts)).toEqual([['1', '2'], ['3']]);
    expect(result.warnings).toEqual(['accounts[1].doorbells[1].deviceId repeats accounts[0].doorbells[1].deviceId: the first account serves that doorbell, so this entry is ignored']);
  });

  it('leaves out the doorbells past 149 in all accounts, naming each', () => {
    const ids = (from: number, count: number) => Array.from({ length: count }, (_, index) => String(from + index));
    const result = ok(parseConfig(block(entry('A', 'a@example.com', ...ids(1, 100)), entry('B', 'b@example.com', ...ids(101, 51))), LAN));
    expect(idsOf(result.accounts).map((list) => list.length)).toEqual([100, 49]);
    expect(result.problems).toEqual([
      'accounts[1].doorbells[49] is left out: at most 149 doorbells in all accounts together',
      'accounts[1].doorbells[50] is left out: at most 149 doorbells in all accounts together',
    ]);
  });

  it('keeps the rules of a doorbell entry inside an account: a bad one left out, named, the others work', () => {
    const result = ok(parseConfig(block({ ...entry('A', 'a@example.com'), doorbells: [{ deviceId: 'x' }, { deviceId: 9 }, { deviceId: '9' }] }), LAN));
    expect(result.problems).toEqual([
      'accounts[0].doorbells[0].deviceId must be an integer from 1 to 9223372036854775807',
      'accounts[0].doorbells[2].deviceId repeats accounts[0].doorbells[1].deviceId: each doorbell needs its own deviceId',
    ]);
    expect(idsOf(result.accounts)).toEqual([['9']]);
  });

  it('reaches an entry with a doorbell access token alone, its key from the token', () => {
    const result = ok(parseConfig(block({ doorbellServerUrl: 'https://doorbell.example.com', doorbellAccessToken: 'tk-abcdef', account: { majorVersion: 14, minorVersion: 0 }, doorbells: [{ deviceId: '1' }] }), LAN));
    expect(result.accounts[0]).toMatchObject({ label: 'Account 1', key: '0211f19fb066', doorbellAccessToken: 'tk-abcdef' });
    expect(result.accounts[0]).not.toHaveProperty('account');
  });
});

describe("parseConfig: what the Homebridge UI's form saves by itself", () => {
  const formBlankEntry = { account: { majorVersion: 14, minorVersion: 0 }, doorbells: [{ button: true, chimeSwitch: false, motionSwitch: false, detections: [] }] };
  const top = { platform: 'DoorbellMotion', name: 'x', account: account('user@example.com'), doorbellServerUrl: 'https://doorbell.example.com', doorbells: [{ deviceId: '7' }] };

  it('leaves out an accounts list of blank entries beside the one account at the top: saving the form keeps a working block', () => {
    const result = ok(parseConfig({ ...top, accounts: [formBlankEntry] }, LAN));
    expect(result).toMatchObject({ problems: [], warnings: [], accounts: [{ label: undefined, folder: '' }] });
  });

  it('leaves out a top-level doorbells list of blank entries beside accounts', () => {
    const result = ok(parseConfig({ ...block(entry('Cabin', 'a@example.com', '1')), doorbells: formBlankEntry.doorbells }, LAN));
    expect(result).toMatchObject({ problems: [], warnings: [], accounts: [{ label: 'Cabin' }] });
  });

  it('leaves out the blank entries it adds to accounts, one more at each save, however many', () => {
    const blanks = Array.from({ length: 25 }, () => formBlankEntry);
    const result = ok(parseConfig(block(...blanks, entry('Cabin', 'a@example.com', '1'), ...blanks), LAN));
    expect(result).toMatchObject({ problems: [], warnings: [], notes: [] });
    expect(labelsOf(result.accounts)).toEqual(['Cabin']);
  });

  it('checks a list with anything more as it stands', () => {
    expect(parseConfig({ ...top, accounts: [{ ...formBlankEntry, label: 'Cabin' }] }, LAN)).toMatchObject({
      status: 'invalid',
      problems: expect.arrayContaining([expect.stringMatching(/^account and accounts cannot both be set/)]),
    });
  });
});

describe('config.schema.json: accounts', () => {
  it("gives each entry the very rules of the top-level account keys; only the entry's doorbells may be none", () => {
    const entryProperties = ((schema.properties.accounts.items as Record<string, unknown>).properties ?? {}) as Record<string, unknown>;
    for (const key of ['account', 'doorbellServerUrl', 'doorbellAccessToken']) {
      expect([key, entryProperties[key]]).toEqual([key, schema.properties[key]]);
    }
    // The entry's doorbells: no minItems, and deviceId required once a doorbell holds more than the form's defaults.
    const { minItems, items, ...doorbells } = schema.properties.doorbells as { minItems: number; items: Record<string, unknown> };
    const { required, ...itemRules } = items;
    expect([minItems, required]).toEqual([1, ['deviceId']]);
    const { items: entryItems, ...entryDoorbells } = entryProperties.doorbells as { items: Record<string, unknown> };
    expect(entryDoorbells).toEqual(doorbells);
    expect(entryItems.then).toEqual({ required });
    const entryItemRules = Object.fromEntries(Object.entries(entryItems).filter(([keyword]) => !['if', 'then', '$comment'].includes(keyword)));
    expect(entryItemRules).toEqual(itemRules);
  });
});

describe('parseConfig: accounts, for any block', () => {
  const email = fc.constantFrom('a@example.com', 'b@example.com', 'A@example.com', 'c@example.org');
  const anEntry = fc.record(
    {
      label: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('Cabin', 'cabin', 'Account 1', ' Home ', ''), fc.jsonValue()),
      account: fc.oneof(fc.record({ serverUrl: fc.constantFrom('https://account.example.com', 'https://x.example.com:443/', 'ftp://x'), email, country: fc.constant('US'), countryCode: fc.constant('1') }), fc.jsonValue()),
      doorbellServerUrl: fc.oneof(fc.constant('https://doorbell.example.com'), fc.jsonValue()),
      doorbellAccessToken: fc.constantFrom('tk-abcdef', 'tk-other', 'a b'),
      doorbells: fc.oneof(fc.array(fc.record({ deviceId: fc.oneof(fc.constantFrom('1', '2', 3, '0'), fc.jsonValue()) }), { maxLength: 4 }), fc.jsonValue()),
      push: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );

  it('never throws, and a usable account has a key, its own label and device ids no other account has', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(anEntry, fc.jsonValue()), { maxLength: 22 }), (entries) => {
        const result = parseConfig(block(...entries), LAN);
        if (result.status !== 'ok') {
          return;
        }
        const usable = result.accounts.filter((parsed) => parsed.fault === undefined);
        expect(usable.length).toBeGreaterThan(0);
        expect(usable.every(({ key, folder }) => key !== undefined && /^[0-9a-f]{12}$/.test(key) && folder === `accounts/${key}`)).toBe(true);
        expect(new Set(usable.map(({ key }) => key)).size).toBe(usable.length);
        expect(new Set(result.accounts.map(({ label }) => String(label).toLowerCase())).size).toBeGreaterThanOrEqual(usable.length);
        expect(new Set(usable.map(({ label }) => String(label).toLowerCase())).size).toBe(usable.length);
        const ids = result.accounts.flatMap(({ doorbells }) => doorbells.map(({ deviceId }) => deviceId));
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.length).toBeLessThanOrEqual(149);
      }),
      propertyRuns(3_000),
    );
  });

  it('gives each account the same key whatever its label and its place in the list', () => {
    const entries = fc.uniqueArray(email, { minLength: 1, maxLength: 4, selector: (address) => address.toLowerCase() }).chain((emails) =>
      fc.tuple(
        fc.constant(emails),
        fc.shuffledSubarray(emails, { minLength: emails.length, maxLength: emails.length }),
        fc.array(fc.string({ minLength: 1, maxLength: 10 }).filter((text) => text.trim() !== ''), { minLength: emails.length, maxLength: emails.length }),
      ),
    );
    fc.assert(
      fc.property(entries, ([emails, shuffled, labels]) => {
        const keysBy = (list: string[], named: boolean) => {
          const result = parseConfig(block(...list.map((address, index) => entry(named ? `${labels[index]} ${index}` : undefined, address, String(index + 1)))), LAN);
          expect(result).toMatchObject({ status: 'ok', problems: [] });
          return Object.fromEntries(result.status === 'ok' ? result.accounts.map(({ key }, index) => [list[index].toLowerCase(), key]) : []);
        };
        const keys = keysBy(emails, false);
        expect(keysBy(shuffled, true)).toEqual(keys);
        for (const [address, key] of Object.entries(keys)) {
          expect(key).toBe(accountKey({ account: account(address) }));
        }
      }),
      propertyRuns(1_000),
    );
  });
});
