import { readFileSync } from 'node:fs';
import type os from 'node:os';
import { describe, expect, it, jest } from '@jest/globals';
import { Ajv } from 'ajv';
import { type ConfigResult, parseConfig } from '../../src/config/parse-config.js';
import { pushAddressWarnings } from '../../src/config/push-settings.js';
import { ADDRESS_KEYWORD, UI_KEYWORDS, WORDS_KEYWORDS } from '../../scripts/lib/validators.js';
import { PLATFORM_NAME } from '../../src/settings.js';
import { readReadme, settingsTable, withSettingsTable } from '../../scripts/lib/readme-settings.js';

const schemaFile = JSON.parse(readFileSync(new URL('../../config.schema.json', import.meta.url), 'utf8')) as {
  pluginAlias: string;
  pluginType: string;
  singular: boolean;
  headerDisplay: string;
  schema: SchemaNode;
  layout: unknown[];
};

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  default?: unknown;
}

const NONE_LEFT = 'doorbells must be a list of 1 to 149 doorbells, at least one of them valid';
const DEVICE_ID_RANGE = 'must be an integer from 1 to 9223372036854775807';
const HTTPS_RULE = 'must be an https:// address (http:// only for localhost), with a port from 1 to 65535 if it has one';
const TEXT = 'must be text in quotes, not empty';
const TOKEN_RULE = 'must be a token in quotes, at least 4 characters long: letters, digits and punctuation, no spaces';
const SECONDS = 'must be an integer from 5 to 3600';
const PORT = 'must be an integer from 1 to 65535';
const VERSION = 'must be an integer of 0 or more';
const CODE_RULE = 'must be 6 digits in quotes, like "012345"';
const LISTEN_RULE = 'must be an IP address or host name to listen on, like "0.0.0.0"';
const PUBLIC_URL_RULE = 'must be an http:// or https:// address, like "https://homebridge.example.com:47850", with a port from 1 to 65535 if it has one';

/** A doorbell's button and controls when its entry names none: the defaults config.schema.json gives them. */
const CONTROL_DEFAULTS = Object.fromEntries(
  Object.entries(schemaFile.schema.properties?.doorbells.items?.properties ?? {}).flatMap(([key, node]) => ('default' in node ? [[key, node.default]] : [])),
);

const CODE = '482913';
const TOKEN = 'doorbell-token-SECRET';

const ACCOUNT = {
  serverUrl: 'https://account.example.com',
  email: 'you@example.com',
  country: 'US',
  countryCode: '1',
  code: CODE,
};

/** The example of the README's configuration section. */
const EXAMPLE = {
  platform: 'DoorbellMotion',
  name: 'Doorbell Motion',
  account: ACCOUNT,
  doorbellServerUrl: 'https://doorbell.example.com',
  doorbells: [{ deviceId: '1234567', name: 'Front Door', motionTimeout: 30 }],
  motionTimeout: 60,
  push: { port: 47850, host: '0.0.0.0', publicUrl: 'http://192.168.1.20:47850' },
};

/** The least a user must write. */
const MINIMAL = {
  platform: 'DoorbellMotion',
  name: 'Doorbell Motion',
  account: { serverUrl: 'https://account.example.com', email: 'you@example.com', country: 'US', countryCode: '1' },
  doorbellServerUrl: 'https://doorbell.example.com',
  doorbells: [{ deviceId: '1234567' }],
};

/** MINIMAL without its account block, as for signing in with doorbellAccessToken alone. */
const WITHOUT_ACCOUNT = Object.fromEntries(Object.entries(MINIMAL).filter(([key]) => key !== 'account'));

function address(family: 'IPv4' | 'IPv6', ip: string, internal: boolean): os.NetworkInterfaceInfo {
  const common = { address: ip, netmask: '255.255.255.0', mac: '00:00:00:00:00:00', internal, cidr: null };
  return family === 'IPv4' ? { ...common, family } : { ...common, family, scopeid: 0 };
}

const LAN = {
  networkInterfaces: () => ({
    lo: [address('IPv4', '127.0.0.1', true), address('IPv6', '::1', true)],
    eth0: [address('IPv6', 'fe80::1', false), address('IPv4', '192.168.1.20', false)],
    wlan0: [address('IPv4', '10.0.0.7', false)],
  }),
  platform: 'linux',
};

const OFFLINE = { networkInterfaces: () => ({ lo: [address('IPv4', '127.0.0.1', true)] }), platform: 'linux' };

function settingsOf(result: ConfigResult) {
  if (result.status !== 'ok') {
    throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  }
  return result.settings;
}

function problemsOf(result: ConfigResult): string[] {
  return result.status === 'unconfigured' ? [] : result.problems;
}

function warningsFor(push: Record<string, unknown>): string[] {
  return pushAddressWarnings(settingsOf(parseConfig({ ...MINIMAL, push }, LAN)).push);
}

/** MINIMAL with the given doorbells. */
function withDoorbells(...doorbells: unknown[]) {
  return { ...MINIMAL, doorbells };
}

/** MINIMAL with an account block that differs from ACCOUNT by the given keys. */
function withAccount(changes: Record<string, unknown>) {
  return { ...MINIMAL, account: { ...ACCOUNT, ...changes } };
}

describe('parseConfig: not configured', () => {
  it.each([
    ['the bare platform block', { platform: 'DoorbellMotion' }],
    ['a block with only a name', { platform: 'DoorbellMotion', name: 'Doorbell Motion' }],
    ['a child-bridge block with only a name', { platform: 'DoorbellMotion', name: 'x', _bridge: { port: 1 } }],
  ])('%s is unconfigured', (_, block) => {
    expect(parseConfig(block, LAN)).toEqual({ status: 'unconfigured', warnings: [] });
  });

  it('rejects a block that is not an object', () => {
    expect(parseConfig(['DoorbellMotion'], LAN)).toEqual({
      status: 'invalid',
      problems: ['the DoorbellMotion platform block must be a JSON object'],
      warnings: [],
    });
  });
});

describe('parseConfig: valid blocks', () => {
  it("reads the README's example exactly", () => {
    const doorbells = [{ deviceId: '1234567', name: 'Front Door', motionTimeout: 30, ...CONTROL_DEFAULTS }];
    expect(parseConfig(EXAMPLE, LAN)).toStrictEqual({
      status: 'ok',
      problems: [],
      warnings: [],
      notes: [],
      accounts: [
        {
          label: undefined,
          // printf '%s' 'https://account.example.com you@example.com' | sha256sum
          key: 'd858f0c98c51',
          folder: '',
          account: { ...ACCOUNT, majorVersion: 14, minorVersion: 0 },
          doorbellServerUrl: 'https://doorbell.example.com',
          doorbells,
        },
      ],
      settings: {
        account: { ...ACCOUNT, majorVersion: 14, minorVersion: 0 },
        doorbellServerUrl: 'https://doorbell.example.com',
        doorbells: [{ deviceId: '1234567', name: 'Front Door', motionTimeout: 30, ...CONTROL_DEFAULTS }],
        alertsSensor: true,
        push: {
          mode: 'direct',
          relay: { relayUrl: 'https://ntfy.sh' },
          direct: { port: 47850, host: '0.0.0.0', publicUrl: 'http://192.168.1.20:47850' },
          registration: { service: 'webhook', os: 'linux', dictVersion: '2.0.0' },
        },
      },
    });
  });

  it('fills in every default', () => {
    // The button on, no switches, no extra sensors.
    expect(CONTROL_DEFAULTS).toMatchObject({ button: true, motionSwitch: false, chimeSwitch: false, detections: [] });
    expect(settingsOf(parseConfig({ ...MINIMAL, name: undefined }, { ...LAN, platform: 'darwin' }))).toStrictEqual({
      account: { ...MINIMAL.account, majorVersion: 14, minorVersion: 0 },
      doorbellServerUrl: 'https://doorbell.example.com',
      doorbells: [{ deviceId: '1234567', name: 'Doorbell 1234567', motionTimeout: 60, ...CONTROL_DEFAULTS }],
      alertsSensor: true,
      push: {
        mode: 'relay',
        relay: { relayUrl: 'https://ntfy.sh' },
        direct: { port: 47850, host: '0.0.0.0', publicUrl: 'http://192.168.1.20:47850' },
        registration: { service: 'webhook', os: 'darwin', dictVersion: '2.0.0' },
      },
    });
  });

  it('adds the Motion Alerts and Chime switches and the detection sensors only where asked', () => {
    const block = withDoorbells(
      { deviceId: '1' },
      { deviceId: '2', motionSwitch: true, chimeSwitch: true, detections: ['vehicle', 'person'] },
      { deviceId: '3', motionSwitch: false, chimeSwitch: false, detections: ['other', 'package', 'animal'] },
    );
    const result = parseConfig(block, LAN);
    expect(settingsOf(result).doorbells.map(({ motionSwitch, chimeSwitch, detections }) => ({ motionSwitch, chimeSwitch, detections }))).toEqual([
      { motionSwitch: false, chimeSwitch: false, detections: [] },
      { motionSwitch: true, chimeSwitch: true, detections: ['vehicle', 'person'] },
      { motionSwitch: false, chimeSwitch: false, detections: ['other', 'package', 'animal'] },
    ]);
    expect(result).toMatchObject({ problems: [], warnings: [] });
  });

  it('uses a repeated detection once, with a warning naming both entries', () => {
    const result = parseConfig(withDoorbells({ deviceId: '1' }, { deviceId: '2', detections: ['person', 'vehicle', 'person', 'person'] }), LAN);
    expect(settingsOf(result).doorbells[1].detections).toEqual(['person', 'vehicle']);
    expect(result).toMatchObject({
      problems: [],
      warnings: [
        'doorbells[1].detections[2] repeats doorbells[1].detections[0]: each detection gets one motion sensor, so it is ignored',
        'doorbells[1].detections[3] repeats doorbells[1].detections[0]: each detection gets one motion sensor, so it is ignored',
      ],
    });
  });

  it('warns that a Chime switch without the doorbell button is ignored, and keeps the doorbell', () => {
    const result = parseConfig(withDoorbells({ deviceId: '1', button: false, chimeSwitch: true }), LAN);
    expect(settingsOf(result).doorbells[0]).toMatchObject({ deviceId: '1', button: false, chimeSwitch: true });
    expect(result).toMatchObject({
      problems: [],
      warnings: ['doorbells[0].chimeSwitch is ignored: with doorbells[0].button false there is no ring to chime, so no Chime switch is added'],
    });
  });

  it('warns that a switch\'s minutes without the switch are ignored, and keeps them where the switch is', () => {
    const result = parseConfig(withDoorbells({ deviceId: '1', chimeSwitchMinutes: 30 }, { deviceId: '2', motionSwitch: true, motionSwitchMinutes: 1440 }), LAN);
    expect(settingsOf(result).doorbells.map(({ chimeSwitchMinutes, motionSwitchMinutes }) => [chimeSwitchMinutes, motionSwitchMinutes])).toEqual([
      [30, undefined],
      [undefined, 1440],
    ]);
    expect(result).toMatchObject({
      problems: [],
      warnings: ['doorbells[0].chimeSwitchMinutes is ignored: without doorbells[0].chimeSwitch true there is no Chime switch to turn on again'],
    });
  });

  it.each([
    [{ motionSwitch: 'no' }, 'doorbells[1].motionSwitch must be true or false'],
    [{ chimeSwitch: true, chimeSwitchMinutes: 0 }, 'doorbells[1].chimeSwitchMinutes must be an integer from 1 to 1440'],
    [{ motionSwitch: true, motionSwitchMinutes: 1441 }, 'doorbells[1].motionSwitchMinutes must be an integer from 1 to 1440'],
    [{ motionSwitch: true, motionSwitchMinutes: 2.5 }, 'doorbells[1].motionSwitchMinutes must be an integer from 1 to 1440'],
    [{ chimeSwitch: 1 }, 'doorbells[1].chimeSwitch must be true or false'],
    [{ detections: 'person' }, 'doorbells[1].detections must be a list of any of "person", "vehicle", "package", "animal" and "other", like ["person"]'],
    [{ detections: ['person', 'cat'] }, 'doorbells[1].detections[1] must be "person", "vehicle", "package", "animal" or "other"'],
    [{ detections: [{ person: true }] }, 'doorbells[1].detections[0] must be "person", "vehicle", "package", "animal" or "other"'],
  ])('leaves out a doorbell with %j, naming the key, and keeps the others', (entry, problem) => {
    const result = parseConfig(withDoorbells({ deviceId: '1' }, { deviceId: '2', ...entry }), LAN);
    expect(problemsOf(result)).toEqual([problem]);
    expect(settingsOf(result).doorbells.map(({ deviceId }) => deviceId)).toEqual(['1']);
  });

  it('gives every doorbell a button unless turned off', () => {
    const block = withDoorbells({ deviceId: '1' }, { deviceId: '2', button: false }, { deviceId: '3', button: true });
    expect(settingsOf(parseConfig(block, LAN)).doorbells.map((doorbell) => doorbell.button)).toEqual([true, false, true]);
    expect(problemsOf(parseConfig(withDoorbells({ deviceId: '1', button: 'no' }), LAN))).toEqual(['doorbells[0].button must be true or false', NONE_LEFT]);
  });

  it('lets the platform motionTimeout apply to doorbells without their own', () => {
    const block = { ...withDoorbells({ deviceId: '1' }, { deviceId: '2', motionTimeout: 5 }), motionTimeout: 3600 };
    expect(settingsOf(parseConfig(block, LAN)).doorbells.map((doorbell) => doorbell.motionTimeout)).toEqual([3600, 5]);
  });

  it('builds the default publicUrl of direct mode from the configured port', () => {
    const push = settingsOf(parseConfig({ ...MINIMAL, push: { mode: 'direct', port: 8080 } }, LAN)).push;
    expect(push).toMatchObject({ mode: 'direct', direct: { publicUrl: 'http://192.168.1.20:8080' } });
  });

  it('falls back to loopback for the publicUrl on a machine without a network', () => {
    expect(settingsOf(parseConfig(MINIMAL, OFFLINE)).push.direct.publicUrl).toBe('http://127.0.0.1:47850');
  });

  it("takes push.os from the machine's platform when not injected", () => {
    expect(settingsOf(parseConfig(MINIMAL, { networkInterfaces: LAN.networkInterfaces })).push.registration.os).toBe(process.platform);
  });

  it('keeps the configured push values', () => {
    const push = { port: 1, host: '::', publicUrl: 'https://hook.example.net', service: 's', os: 'o', dictVersion: '3' };
    expect(settingsOf(parseConfig({ ...MINIMAL, push }, LAN)).push).toStrictEqual({
      mode: 'direct',
      relay: { relayUrl: 'https://ntfy.sh' },
      direct: { port: 1, host: '::', publicUrl: 'https://hook.example.net' },
      registration: { service: 's', os: 'o', dictVersion: '3' },
    });
  });

  it('delivers through the relay unless a public address or direct mode is set', () => {
    const modeOf = (push: Record<string, unknown>) => settingsOf(parseConfig({ ...MINIMAL, push }, LAN)).push.mode;
    expect([
      modeOf({}),
      modeOf({ publicUrl: 'https://hook.example.net' }),
      modeOf({ mode: 'direct' }),
      modeOf({ mode: 'relay', publicUrl: 'https://hook.example.net' }),
    ]).toEqual(['relay', 'direct', 'direct', 'relay']);
  });

  it('keeps a self-hosted relay and its access token', () => {
    const push = { relayUrl: 'https://ntfy.example.org/', relayToken: 'tk_0123456789abcdefghijklmnopqrs' };
    expect(settingsOf(parseConfig({ ...MINIMAL, push }, LAN)).push.relay).toStrictEqual({
      relayUrl: 'https://ntfy.example.org',
      relayToken: 'tk_0123456789abcdefghijklmnopqrs',
    });
  });

  it('removes trailing slashes from addresses', () => {
    const block = {
      ...MINIMAL,
      account: { ...MINIMAL.account, serverUrl: 'https://account.example.com/api//' },
      doorbellServerUrl: 'https://doorbell.example.com/',
      push: { publicUrl: 'http://192.168.1.9:47850/' },
    };
    const settings = settingsOf(parseConfig(block, LAN));
    expect([settings.account?.serverUrl, settings.doorbellServerUrl, settings.push.direct.publicUrl]).toEqual([
      'https://account.example.com/api',
      'https://doorbell.example.com',
      'http://192.168.1.9:47850',
    ]);
  });

  const LOCAL_OR_HTTPS = ['http://localhost:8080', 'http://127.0.0.1', 'http://127.10.0.1:81/base', 'http://[::1]:9000'];
  it.each([...LOCAL_OR_HTTPS, 'https://[2001:db8::1]'])('accepts %s as a service address', (url) => {
    expect(settingsOf(parseConfig({ ...MINIMAL, doorbellServerUrl: url }, LAN)).doorbellServerUrl).toBe(url);
  });

  it('uses doorbellAccessToken without an account', () => {
    const settings = settingsOf(parseConfig({ ...WITHOUT_ACCOUNT, doorbellAccessToken: TOKEN }, LAN));
    expect(settings.doorbellAccessToken).toBe(TOKEN);
    expect(settings).not.toHaveProperty('account');
  });

  it('leaves out optional keys that were not set', () => {
    const settings = settingsOf(parseConfig(MINIMAL, LAN));
    expect(settings).not.toHaveProperty('doorbellAccessToken');
    expect(settings.account).not.toHaveProperty('code');
  });
});

describe('parseConfig: an account block holding only the settings form defaults', () => {
  const FORM_DEFAULTS = { majorVersion: 14, minorVersion: 0 };

  it('is no account: a set-up with doorbellAccessToken survives the form\'s Save', () => {
    const settings = settingsOf(parseConfig({ ...WITHOUT_ACCOUNT, doorbellAccessToken: TOKEN, account: FORM_DEFAULTS }, LAN));
    expect(settings.doorbellAccessToken).toBe(TOKEN);
    expect(settings).not.toHaveProperty('account');
  });

  it('is no account without a token either, which is then missing', () => {
    expect(parseConfig({ ...WITHOUT_ACCOUNT, account: FORM_DEFAULTS }, LAN)).toEqual({
      status: 'invalid',
      problems: ['account is required unless doorbellAccessToken is set'],
      warnings: [],
    });
  });

  it('leaves a block with nothing else unconfigured', () => {
    expect(parseConfig({ platform: PLATFORM_NAME, name: 'Doorbell Motion', account: FORM_DEFAULTS }, LAN)).toEqual({ status: 'unconfigured', warnings: [] });
  });

  it('is still checked as an account with anything more, an e-mail say', () => {
    const block = { ...WITHOUT_ACCOUNT, doorbellAccessToken: TOKEN, account: { ...FORM_DEFAULTS, email: 'you@example.com' } };
    expect(problemsOf(parseConfig(block, LAN))).toEqual([
      'account.serverUrl is required',
      'account.country is required',
      'account.countryCode is required',
    ]);
  });
});

describe('parseConfig: device ids', () => {
  it.each([
    ['the int64 maximum as a string', '9223372036854775807', '9223372036854775807'],
    ['an id above 2^53 as a string', '9007199254740993', '9007199254740993'],
    ['a safe JSON integer', 42, '42'],
    ['the largest safe JSON integer', Number.MAX_SAFE_INTEGER, '9007199254740991'],
  ])('accepts %s', (_, deviceId, expected) => {
    expect(settingsOf(parseConfig(withDoorbells({ deviceId }), LAN)).doorbells[0]).toEqual({
      deviceId: expected,
      name: `Doorbell ${expected}`,
      motionTimeout: 60,
      ...CONTROL_DEFAULTS,
    });
  });

  it.each([
    ['one above the int64 maximum', '9223372036854775808'],
    ['20 digits', '10000000000000000000'],
    ['zero', '0'],
    ['zero as an integer', 0],
    ['a negative integer', -1],
    ['a leading zero', '01'],
    ['a sign', '+1'],
    ['a fraction', 1.5],
    ['letters', '12a'],
    ['an empty string', ''],
    ['a boolean', true],
  ])('rejects %s', (_, deviceId) => {
    expect(parseConfig(withDoorbells({ deviceId }), LAN)).toEqual({
      status: 'invalid',
      problems: [`doorbells[0].deviceId ${DEVICE_ID_RANGE}`, NONE_LEFT],
      warnings: [],
    });
  });

  it('asks for quotes around a JSON integer that lost digits in JSON.parse', () => {
    const rounded = JSON.parse('{"deviceId": 9007199254740993}') as { deviceId: number };
    expect(parseConfig(withDoorbells({ deviceId: '7' }, rounded), LAN)).toMatchObject({
      status: 'ok',
      problems: [
        'doorbells[1].deviceId must be written in quotes, like "9007199254740993": ' +
          'numbers above 9007199254740991 lose digits when config.json is read',
      ],
    });
  });

  it('leaves out a repeated id, naming both entries, and keeps the first', () => {
    const result = parseConfig(withDoorbells({ deviceId: '5', name: 'First' }, { deviceId: 6 }, { deviceId: 5 }), LAN);
    expect(result).toMatchObject({
      status: 'ok',
      problems: ['doorbells[2].deviceId repeats doorbells[0].deviceId: each doorbell needs its own deviceId'],
    });
    expect(settingsOf(result).doorbells.map((doorbell) => doorbell.name)).toEqual(['First', 'Doorbell 6']);
  });

  it('uses a repeated id when the entry before it was left out for a problem of its own', () => {
    const result = parseConfig(withDoorbells({ deviceId: '5', motionTimeout: 2 }, { deviceId: 5, name: 'Second' }), LAN);
    expect(result).toMatchObject({ status: 'ok', problems: [`doorbells[0].motionTimeout must be an integer from 5 to 3600`] });
    expect(settingsOf(result).doorbells.map((doorbell) => [doorbell.deviceId, doorbell.name])).toEqual([['5', 'Second']]);
  });
});

describe('parseConfig: a bad doorbell entry', () => {
  it.each([
    ['a missing deviceId', { name: 'Porch' }, 'doorbells[1].deviceId is required'],
    ['a bad deviceId', { deviceId: 'abc' }, `doorbells[1].deviceId ${DEVICE_ID_RANGE}`],
    ['an empty name', { deviceId: '2', name: '' }, 'doorbells[1].name must be text in quotes, not empty'],
    ['a short motionTimeout', { deviceId: '2', motionTimeout: 4 }, `doorbells[1].motionTimeout ${SECONDS}`],
    ['a long motionTimeout', { deviceId: '2', motionTimeout: 3601 }, `doorbells[1].motionTimeout ${SECONDS}`],
    ['an entry that is not an object', '2', 'doorbells[1] must be an object with a deviceId'],
  ])('with %s is left out and named; the others work', (_, bad, message) => {
    const result = parseConfig(withDoorbells({ deviceId: '1' }, bad, { deviceId: '3' }), LAN);
    expect(result).toMatchObject({ status: 'ok', problems: [message] });
    expect(settingsOf(result).doorbells.map((doorbell) => doorbell.deviceId)).toEqual(['1', '3']);
  });

  it('makes the block invalid when no doorbell is left', () => {
    expect(parseConfig(withDoorbells({ deviceId: 'x' }, {}), LAN)).toEqual({
      status: 'invalid',
      problems: [`doorbells[0].deviceId ${DEVICE_ID_RANGE}`, 'doorbells[1].deviceId is required', NONE_LEFT],
      warnings: [],
    });
  });
});

describe('parseConfig: bad settings outside the doorbells make the block invalid', () => {
  it.each([
    ['no account and no token', WITHOUT_ACCOUNT, 'account is required unless doorbellAccessToken is set'],
    [
      'an account that is not an object',
      { ...MINIMAL, account: 'you@example.com' },
      'account must be an object with serverUrl, email, country and countryCode',
    ],
    ['a missing account.email', withAccount({ email: undefined }), 'account.email is required'],
    [
      'a bad account.email',
      withAccount({ email: 'you at example.com' }),
      'account.email must be an e-mail address, like "you@example.com"',
    ],
    ['an http account.serverUrl', withAccount({ serverUrl: 'http://account.example.com' }), `account.serverUrl ${HTTPS_RULE}`],
    ['a lower-case account.country', withAccount({ country: 'us' }), 'account.country must be 2 capital letters in quotes, like "US"'],
    [
      'a numeric account.countryCode',
      withAccount({ countryCode: 49 }),
      'account.countryCode must be 1 to 4 digits in quotes, like "1" or "49"',
    ],
    ['a numeric account.code', withAccount({ code: 12345 }), `account.code ${CODE_RULE}`],
    ['a 5-digit account.code', withAccount({ code: '12345' }), `account.code ${CODE_RULE}`],
    ['a negative account.majorVersion', withAccount({ majorVersion: -1 }), `account.majorVersion ${VERSION}`],
    ['a fractional account.minorVersion', withAccount({ minorVersion: 0.5 }), `account.minorVersion ${VERSION}`],
    ['a missing doorbellServerUrl', { ...MINIMAL, doorbellServerUrl: undefined }, 'doorbellServerUrl is required'],
    ['an http doorbellServerUrl', { ...MINIMAL, doorbellServerUrl: 'http://doorbell.example.com' }, `doorbellServerUrl ${HTTPS_RULE}`],
    ['a look-alike localhost', { ...MINIMAL, doorbellServerUrl: 'http://localhost.example.com' }, `doorbellServerUrl ${HTTPS_RULE}`],
    ['a query in an address', { ...MINIMAL, doorbellServerUrl: 'https://doorbell.example.com/?a=1' }, `doorbellServerUrl ${HTTPS_RULE}`],
    ['a doorbellAccessToken too short to be masked in the log', { ...MINIMAL, doorbellAccessToken: 'abc' }, `doorbellAccessToken ${TOKEN_RULE}`],
    ['an empty name', { ...MINIMAL, name: '' }, `name ${TEXT}`],
    ['a missing doorbells list', { ...MINIMAL, doorbells: undefined }, 'doorbells is required'],
    ['an empty doorbells list', { ...MINIMAL, doorbells: [] }, NONE_LEFT],
    ['a doorbells object', { ...MINIMAL, doorbells: { deviceId: '1' } }, NONE_LEFT],
    ['a short motionTimeout', { ...MINIMAL, motionTimeout: 4 }, `motionTimeout ${SECONDS}`],
    ['a motionTimeout in quotes', { ...MINIMAL, motionTimeout: '60' }, `motionTimeout ${SECONDS}`],
    ['a push that is not an object', { ...MINIMAL, push: 47850 }, 'push must be an object'],
    ['push.port 0', { ...MINIMAL, push: { port: 0 } }, `push.port ${PORT}`],
    ['push.port 65536', { ...MINIMAL, push: { port: 65536 } }, `push.port ${PORT}`],
    ['an empty push.host', { ...MINIMAL, push: { host: '' } }, `push.host ${LISTEN_RULE}`],
    ['a non-web push.publicUrl', { ...MINIMAL, push: { publicUrl: 'ftp://192.168.1.20' } }, `push.publicUrl ${PUBLIC_URL_RULE}`],
    ['an empty push.service', { ...MINIMAL, push: { service: '' } }, `push.service ${TEXT}`],
    ['an empty push.os', { ...MINIMAL, push: { os: '' } }, `push.os ${TEXT}`],
    ['an empty push.dictVersion', { ...MINIMAL, push: { dictVersion: '' } }, `push.dictVersion ${TEXT}`],
    ['an unknown push.mode', { ...MINIMAL, push: { mode: 'webhook' } }, 'push.mode must be "relay" or "direct"'],
    ['an http push.relayUrl', { ...MINIMAL, push: { relayUrl: 'http://ntfy.example.org' } }, `push.relayUrl ${HTTPS_RULE}`],
    ['a push.relayToken too short to be masked in the log', { ...MINIMAL, push: { relayToken: 'tk_' } }, `push.relayToken ${TOKEN_RULE}`],
  ])('%s', (_, block, message) => {
    expect(parseConfig(JSON.parse(JSON.stringify(block)), LAN)).toEqual({ status: 'invalid', problems: [message], warnings: [] });
  });

  it('reports every problem at once, one line each, doorbells included', () => {
    const block = { ...withDoorbells({ deviceId: '1', motionTimeout: 1 }), motionTimeout: 1, push: { port: 0 } };
    expect(problemsOf(parseConfig(block, LAN))).toEqual([
      'doorbells[0].motionTimeout must be an integer from 5 to 3600',
      'motionTimeout must be an integer from 5 to 3600',
      'push.port must be an integer from 1 to 65535',
    ]);
  });
});

describe('parseConfig: unknown settings', () => {
  const IGNORED = 'is not a known setting; it is ignored';

  it('are named in a warning each and ignored inside a doorbell entry, which still counts', () => {
    const result = parseConfig(withDoorbells({ deviceId: '1', motionTimout: 30, note: 'porch' }, { deviceId: '2' }), LAN);
    expect(result).toMatchObject({
      status: 'ok',
      problems: [],
      warnings: [`doorbells[0].motionTimout ${IGNORED}`, `doorbells[0].note ${IGNORED}`],
    });
    expect(settingsOf(result).doorbells).toEqual([
      { deviceId: '1', name: 'Doorbell 1', motionTimeout: 60, ...CONTROL_DEFAULTS },
      { deviceId: '2', name: 'Doorbell 2', motionTimeout: 60, ...CONTROL_DEFAULTS },
    ]);
  });

  it('are named in a warning each and ignored at the top level and inside account and push', () => {
    const block = { ...MINIMAL, motionTimout: 30, account: { ...MINIMAL.account, password: 'x' }, push: { portt: 1, mode: 'relay' } };
    const result = parseConfig(block, LAN);
    expect(result).toMatchObject({
      status: 'ok',
      problems: [],
      warnings: [`account.password ${IGNORED}`, `motionTimout ${IGNORED}`, `push.portt ${IGNORED}`],
    });
    expect(settingsOf(result)).toStrictEqual(settingsOf(parseConfig({ ...MINIMAL, push: { mode: 'relay' } }, LAN)));
  });

  it('never hide what else is wrong: a bad setting beside them still makes the block invalid', () => {
    expect(parseConfig({ ...MINIMAL, note: 'x', motionTimeout: 1 }, LAN)).toEqual({
      status: 'invalid',
      problems: [`motionTimeout ${SECONDS}`],
      warnings: [`note ${IGNORED}`],
    });
  });

  it('are named even when the key is empty, not a plain name, or a name every object has', () => {
    const block = { ...MINIMAL, '': 1, constructor: 2, account: { ...MINIMAL.account, 'e mail': 'x', __proto__: null } };
    expect(parseConfig(block, LAN)).toMatchObject({
      status: 'ok',
      warnings: [`account["e mail"] ${IGNORED}`, `[""] ${IGNORED}`, `constructor ${IGNORED}`],
    });
  });

  it('configure nothing: a block with only a note is not configured yet, and the note is named', () => {
    expect(parseConfig({ platform: PLATFORM_NAME, name: 'Doorbell Motion', note: 'later', account: { comment: 'x' } }, LAN)).toEqual({
      status: 'unconfigured',
      warnings: [`note ${IGNORED}`, `account.comment ${IGNORED}`],
    });
  });

  it("do not include Homebridge's own keys, nor the fully-qualified platform name", () => {
    const block = { ...MINIMAL, platform: 'homebridge-doorbell-motion.DoorbellMotion', _bridge: { username: '0E:00:00:00:00:01', port: 51830 } };
    expect(parseConfig(block, LAN)).toMatchObject({ status: 'ok', problems: [], warnings: [] });
  });
});

describe('parseConfig: addresses are checked by the URL parser every later step uses', () => {
  const settingsWith = (key: string, url: string) => {
    switch (key) {
      case 'account.serverUrl':
        return withAccount({ serverUrl: url });
      case 'doorbellServerUrl':
        return { ...MINIMAL, doorbellServerUrl: url };
      default:
        return { ...MINIMAL, push: { [key.slice('push.'.length)]: url } };
    }
  };
  const RULES: Record<string, string> = {
    'account.serverUrl': HTTPS_RULE,
    doorbellServerUrl: HTTPS_RULE,
    'push.relayUrl': HTTPS_RULE,
    'push.publicUrl': PUBLIC_URL_RULE,
  };
  const KEYS = Object.keys(RULES);
  const BAD = [
    'https://home.example.com:99999',
    'https://home.example.com:65536',
    'https://home.example.com:0',
    'https://home.example.com:00443',
    'https://[1::2::3]',
    'https://[::1',
    'https://1.2.3.256',
    'http://127.999.0.1',
  ];

  it.each(KEYS.flatMap((key) => BAD.map((url) => [key, url])))('%s %s is named, never thrown', (key, url) => {
    expect(parseConfig(settingsWith(key, url), LAN)).toEqual({ status: 'invalid', problems: [`${key} ${RULES[key]}`], warnings: [] });
  });

  it.each(KEYS.flatMap((key) => ['https://home.example.com:1', 'https://home.example.com:65535', 'https://[2001:db8::1]:443/base'].map((url) => [key, url])))(
    '%s %s is taken',
    (key, url) => {
      expect(parseConfig(settingsWith(key, url), LAN)).toMatchObject({ status: 'ok', problems: [] });
    },
  );

  const USER = 'alice-at-home';
  const PASSWORD = 'pw-s3cr3t-9';
  const WITH_USER_INFO = [
    `https://${USER}:${PASSWORD}@home.example.com`,
    `https://${USER}@home.example.com:8443/base`,
    `https://:${PASSWORD}@home.example.com`,
    `http://${USER}:${PASSWORD}@127.0.0.1:8080`,
  ];
  const NO_CREDENTIALS: Record<string, string> = {
    'push.relayUrl': "must not hold a user name or password (user:password@ before the host): put the relay's access token in push.relayToken",
  };
  const credentialsRule = (key: string) => NO_CREDENTIALS[key] ?? 'must not hold a user name or password (user:password@ before the host): addresses with sign-in details are not supported';

  it.each(KEYS.flatMap((key) => WITH_USER_INFO.map((url) => [key, url])))('%s %s is named as holding credentials, which no line repeats', (key, url) => {
    const result = parseConfig(settingsWith(key, url), LAN);

    expect(result).toEqual({ status: 'invalid', problems: [`${key} ${credentialsRule(key)}`], warnings: [] });
    const lines = [...problemsOf(result), ...result.warnings];
    expect(lines.filter((line) => line.includes(USER) || line.includes(PASSWORD))).toEqual([]);
  });

  it('takes a public address whose port is at either bound, in direct mode, and warns as for any other', () => {
    expect(warningsFor({ publicUrl: 'https://home.example.com:65535' })).toEqual([]);
    expect(warningsFor({ publicUrl: 'http://192.168.1.20:1' })).toEqual([expect.stringContaining('a local address')]);
  });
});

describe('parseConfig: the other values that reach the network or the system', () => {
  it.each([
    ['an IPv4 address', '192.168.1.20'],
    ['all IPv4 interfaces', '0.0.0.0'],
    ['all interfaces', '::'],
    ['an IPv6 address with a zone', 'fe80::1%eth0'],
    ['a host name', 'homebridge.local'],
    ['localhost', 'localhost'],
  ])('takes %s as push.host', (_, host) => {
    expect(settingsOf(parseConfig({ ...MINIMAL, push: { host } }, LAN)).push.direct.host).toBe(host);
  });

  it.each([
    ['a space', 'home bridge'],
    ['a control character', '127.0.0.1\u0000'],
    ['brackets', '[::1]'],
    ['dotted digits that are no IPv4 address', '1.2.3.256'],
    ['a malformed IPv6 address', '1::2::3'],
    ['a URL', 'http://0.0.0.0'],
    ['a name longer than DNS allows', `${'a'.repeat(63)}.`.repeat(5)],
  ])('names push.host with %s', (_, host) => {
    expect(parseConfig({ ...MINIMAL, push: { host } }, LAN)).toEqual({ status: 'invalid', problems: [`push.host ${LISTEN_RULE}`], warnings: [] });
  });

  it.each([
    ['a space', 'tk_abc def'],
    ['a line break', 'tk_abc\ndef'],
    ['a control character', 'tk_abc\u0007'],
    ['a letter no HTTP header takes', 'tk_abcé'],
  ])('names a token with %s, which no HTTP header could carry', (_, token) => {
    expect(problemsOf(parseConfig({ ...MINIMAL, doorbellAccessToken: token, push: { relayToken: token } }, LAN))).toEqual([
      `doorbellAccessToken ${TOKEN_RULE}`,
      `push.relayToken ${TOKEN_RULE}`,
    ]);
  });

  it('names an e-mail address with a control character, or longer than any address', () => {
    expect(problemsOf(parseConfig(withAccount({ email: 'you\u001b[2J@example.com' }), LAN))).toEqual(['account.email must be an e-mail address, like "you@example.com"']);
    expect(problemsOf(parseConfig(withAccount({ email: `${'a'.repeat(250)}@example.com` }), LAN))).toEqual(['account.email must be an e-mail address, like "you@example.com"']);
  });

  it('takes as many doorbells as one bridge holds, and names one more, which would stop Homebridge', () => {
    const doorbells = (count: number) => Array.from({ length: count }, (_, index) => ({ deviceId: String(index + 1) }));
    expect(settingsOf(parseConfig(withDoorbells(...doorbells(149)), LAN)).doorbells).toHaveLength(149);
    expect(problemsOf(parseConfig(withDoorbells(...doorbells(150)), LAN))).toEqual([NONE_LEFT]);
  });
});

describe('parseConfig: secrets', () => {
  it('never puts the code or the token in a problem', () => {
    const blocks = [
      { ...MINIMAL, account: { ...ACCOUNT, code: `${CODE}7` }, doorbellAccessToken: TOKEN, motionTimeout: 1 },
      { ...MINIMAL, account: { ...ACCOUNT, code: 123456 }, doorbellAccessToken: 1 },
      { ...MINIMAL, account: { ...ACCOUNT, serverUrl: `http://${CODE}.example.com` }, doorbellAccessToken: TOKEN },
      { ...withDoorbells({ deviceId: TOKEN }, { deviceId: `0${CODE}`, name: '' }), doorbellAccessToken: TOKEN },
    ];
    const problems = blocks.flatMap((block) => problemsOf(parseConfig(block, LAN)));
    expect(problems).toHaveLength(9);
    for (const secret of [CODE, '123456', TOKEN]) {
      expect(problems.filter((problem) => problem.includes(secret))).toEqual([]);
    }
  });

  it('does not change the block it was given', () => {
    const block = JSON.parse(JSON.stringify(withDoorbells({ deviceId: 42 }))) as Record<string, unknown>;
    const copy = JSON.parse(JSON.stringify(block)) as Record<string, unknown>;
    parseConfig(block, LAN);
    expect(block).toStrictEqual(copy);
  });
});

/** Every place a setting can be, by its generic name: `account`, `doorbells[]`, `push.port`... */
function settingNames(node: SchemaNode, prefix = ''): string[] {
  const ofProperties = Object.entries(node.properties ?? {}).flatMap(([key, child]) => {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    return [name, ...settingNames(child, name)];
  });
  const ofItems = node.items ? [`${prefix}[]`, ...settingNames(node.items, `${prefix}[]`)] : [];
  return [...ofProperties, ...ofItems];
}

/** The keys the UI layout draws. */
function layoutKeys(items: unknown[]): string[] {
  return items.flatMap((item) => {
    if (typeof item === 'string') {
      return [item];
    }
    const { key, items: children } = item as { key?: string; items?: unknown[] };
    return [...(key === undefined ? [] : [key]), ...(Array.isArray(children) ? layoutKeys(children) : [])];
  });
}

/** Every `required` anywhere in the file, with where it is. */
function requiredKeywords(value: unknown, where = '$'): Array<[string, unknown]> {
  if (typeof value !== 'object' || value === null) {
    return [];
  }
  return Object.entries(value).flatMap(([key, child]) => [
    ...(key === 'required' ? [[where, child] as [string, unknown]] : []),
    ...requiredKeywords(child, `${where}.${key}`),
  ]);
}

describe('config.schema.json', () => {
  it('is the DoorbellMotion single platform', () => {
    expect(schemaFile).toMatchObject({ pluginAlias: PLATFORM_NAME, pluginType: 'platform', singular: true });
    expect(schemaFile.headerDisplay).toContain('(https://github.com/homebridge-doorbell-motion/homebridge-doorbell-motion#readme)');
  });

  it('compiles under strict Ajv with only the form keywords the Homebridge UI reads and the words of the log added, and warns of nothing', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      // strictRequired stays off: the "account unless doorbellAccessToken" if/else names properties of the parent.
      const ajv = new Ajv({ strict: true, strictRequired: false });
      ajv.addVocabulary([...UI_KEYWORDS, ...WORDS_KEYWORDS]);
      ajv.addKeyword(ADDRESS_KEYWORD);
      expect(() => ajv.compile(schemaFile.schema)).not.toThrow();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('fails to compile under strict Ajv without those form keywords, so the check above can fail', () => {
    expect(() => new Ajv({ strict: true, strictRequired: false }).compile(schemaFile.schema)).toThrow(/unknown keyword/);
  });

  it('uses only object-level required arrays, never a per-field required: true', () => {
    const found = requiredKeywords(schemaFile);
    expect(found.length).toBeGreaterThan(0);
    for (const [where, required] of found) {
      expect([where, Array.isArray(required)]).toEqual([where, true]);
    }
  });

  it("is what README.md's table of settings says, as npm run readme-settings writes it", () => {
    const readme = readReadme();
    expect(withSettingsTable(readme) === readme ? 'up to date' : 'stale: run npm run readme-settings').toBe('up to date');
  });

  it("changes README.md's table with any setting's words, so the check above can fail", () => {
    const changed = structuredClone(schemaFile.schema);
    Object.assign(changed.properties?.motionTimeout ?? {}, { description: 'Another text.' });
    expect(settingsTable(changed)).not.toBe(settingsTable(schemaFile.schema));
    expect(settingsTable(changed)).toContain('Another text.');
  });

  it('lays out every value setting exactly once', () => {
    // A list's items are drawn by the list: doorbells[] by doorbells, doorbells[].detections[] as its checkboxes.
    const values = settingNames(schemaFile.schema).filter((name) => !['account', 'push', 'accounts[].account'].includes(name) && !name.endsWith('[]'));
    expect(layoutKeys(schemaFile.layout).sort()).toEqual(values.sort());
  });
});

describe('pushAddressWarnings', () => {

  it.each([
    ['a private IPv4 address', 'http://192.168.1.20:47850'],
    ['the default LAN address', undefined],
    ['a 10/8 address over https', 'https://10.1.2.3'],
    ['a link-local address', 'http://169.254.10.20:47850'],
    ['loopback', 'http://127.0.0.1:47850'],
    ['an IPv6 unique local address', 'http://[fd00::5]:47850'],
    ['an mDNS name', 'https://homebridge.local:47850'],
    ['the unspecified address', 'http://0.0.0.0:47850'],
    ['the IPv6 unspecified address', 'https://[::]:47850'],
    ['an IPv4-mapped private address', 'http://[::ffff:192.168.1.2]:47850'],
    ['an IPv4-mapped unspecified address', 'https://[::ffff:0.0.0.0]:47850'],
    ['an IPv4-mapped loopback address', 'https://[::ffff:127.0.0.1]:47850'],
  ])('warns that a cloud cannot reach %s, naming relay mode as the fix', (_, publicUrl) => {
    const warnings = warningsFor({ mode: 'direct', ...(publicUrl === undefined ? {} : { publicUrl }) });
    expect(warnings).toEqual([expect.stringContaining('a local address that a cloud service cannot reach')]);
    expect(warnings[0]).toContain('relay mode');
  });

  it('warns that a public http address sends every delivery unencrypted', () => {
    expect(warningsFor({ publicUrl: 'http://203.0.113.7:47850' })).toEqual([expect.stringContaining('crosses the internet unencrypted')]);
    expect(warningsFor({ publicUrl: 'http://[::ffff:203.0.113.7]:47850' })).toEqual([expect.stringContaining('crosses the internet unencrypted')]);
  });

  it('does not throw for an address the configuration check would have refused', () => {
    const push = settingsOf(parseConfig({ ...MINIMAL, push: { mode: 'direct' } }, LAN)).push;
    expect(pushAddressWarnings({ ...push, direct: { ...push.direct, publicUrl: 'https://home.example.com:99999' } })).toEqual([]);
  });

  it('says nothing of a public https address, nor in relay mode', () => {
    expect(warningsFor({ publicUrl: 'https://home.example.com/doorbell' })).toEqual([]);
    expect(warningsFor({ publicUrl: 'http://192.168.1.20:47850', mode: 'relay' })).toEqual([]);
  });
});
