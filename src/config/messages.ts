import { MAX_DEVICE_ID } from '../values/device-id.js';

/** What one Homebridge bridge can hold: HAP-NodeJS throws, and Homebridge stops, past it. */
const MAX_DOORBELLS = 149;

/**
 * The log lines for a bad platform block. Each names one setting the way a user writes it in
 * config.json (`doorbells[1].deviceId`, indexes from 0) and says what is expected. None ever
 * contains a configured value, so the verification code and the access token cannot leak.
 */

/** A place in the platform block: property names and array indexes. */
export type SettingPath = ReadonlyArray<string | number>;

export interface Problem {
  path: SettingPath;
  message: string;
}

const PORT_RANGE = 'with a port from 1 to 65535 if it has one';
const HTTPS_ADDRESS = `an https:// address (http:// only for localhost), ${PORT_RANGE}`;
const TEXT = 'text in quotes, not empty';
/**
 * The logger masks no shorter value (log.ts), and no real token is this short. A token travels in an
 * HTTP header, where a space or a control character cannot go.
 */
const TOKEN = 'a token in quotes, at least 4 characters long: letters, digits and punctuation, no spaces';
const SECONDS = 'an integer from 5 to 3600';
const VERSION = 'an integer of 0 or more';

/** What each setting must be, completing "<setting> must be ...". `[]` stands for any index. */
export const EXPECTED: Readonly<Record<string, string>> = {
  name: TEXT,
  account: 'an object with serverUrl, email, country and countryCode',
  'account.serverUrl': HTTPS_ADDRESS,
  'account.email': 'an e-mail address, like "you@example.com"',
  'account.country': '2 capital letters in quotes, like "US"',
  'account.countryCode': '1 to 4 digits in quotes, like "1" or "49"',
  'account.code': '6 digits in quotes, like "012345"',
  'account.majorVersion': VERSION,
  'account.minorVersion': VERSION,
  doorbellServerUrl: HTTPS_ADDRESS,
  doorbellAccessToken: TOKEN,
  doorbells: `a list of 1 to ${MAX_DOORBELLS} doorbells, at least one of them valid`,
  'doorbells[]': 'an object with a deviceId',
  'doorbells[].deviceId': `an integer from 1 to ${MAX_DEVICE_ID}`,
  'doorbells[].name': TEXT,
  'doorbells[].motionTimeout': SECONDS,
  'doorbells[].button': 'true or false',
  'doorbells[].chimeSwitch': 'true or false',
  'doorbells[].motionSwitch': 'true or false',
  'doorbells[].detections': 'a list of any of "person", "vehicle" and "other", like ["person"]',
  'doorbells[].detections[]': '"person", "vehicle" or "other"',
  motionTimeout: SECONDS,
  alertsSensor: 'true or false',
  push: 'an object',
  'push.mode': '"relay" or "direct"',
  'push.relayUrl': HTTPS_ADDRESS,
  'push.relayToken': TOKEN,
  'push.port': 'an integer from 1 to 65535',
  'push.host': 'an IP address or host name to listen on, like "0.0.0.0"',
  'push.publicUrl': `an http:// or https:// address, like "https://homebridge.example.com:47850", ${PORT_RANGE}`,
  'push.service': TEXT,
  'push.os': TEXT,
  'push.dictVersion': TEXT,
};

/** Settings whose absence needs more than "is required" to be understood. */
const MISSING: Readonly<Record<string, string>> = {
  account: 'account is required unless doorbellAccessToken is set',
};

/** A key that is not a plain name (empty, or with spaces or dots) is quoted, so the line still names it: `account[""]`. */
const PLAIN_KEY = /^[A-Za-z_$][\w$]*$/;

function joinPath(path: SettingPath, index: (position: number) => string): string {
  return path
    .map((part, i) => (typeof part === 'number' ? index(part) : !PLAIN_KEY.test(part) ? `[${JSON.stringify(part)}]` : i === 0 ? part : `.${part}`))
    .join('');
}

/** `doorbells[1].deviceId`: the way the setting is written in config.json. */
function settingName(path: SettingPath): string {
  return joinPath(path, (position) => `[${position}]`);
}

/** `doorbells[].deviceId`: the same name for every index, as EXPECTED is keyed. */
export function genericName(path: SettingPath): string {
  return joinPath(path, () => '[]');
}

export function mustBe(path: SettingPath): Problem {
  const expected = EXPECTED[genericName(path)];
  const name = settingName(path);
  return { path, message: expected === undefined ? `${name} is not valid` : `${name} must be ${expected}` };
}

/** What to do instead of writing credentials into an address, by setting; the rest have no such place. */
const CREDENTIALS_INSTEAD: Readonly<Record<string, string>> = {
  'push.relayUrl': "put the relay's access token in push.relayToken",
};

/** An address with `user:password@` in it: named without the address, which holds them. */
export function holdsCredentials(path: SettingPath): Problem {
  const instead = CREDENTIALS_INSTEAD[genericName(path)] ?? 'addresses with sign-in details are not supported';
  return { path, message: `${settingName(path)} must not hold a user name or password (user:password@ before the host): ${instead}` };
}

export function isRequired(path: SettingPath): Problem {
  return { path, message: MISSING[genericName(path)] ?? `${settingName(path)} is required` };
}

/**
 * Homebridge reads config.json with JSON.parse, so an unquoted id above 2^53 reaches us already
 * rounded to another id: the only fix is the user's, by quoting it.
 */
export function mustBeQuoted(path: SettingPath): Problem {
  return {
    path,
    message:
      `${settingName(path)} must be written in quotes, like "9007199254740993": ` +
      `numbers above ${Number.MAX_SAFE_INTEGER} lose digits when config.json is read`,
  };
}

export function repeatsDeviceId(path: SettingPath, firstPath: SettingPath): Problem {
  return {
    path,
    message: `${settingName(path)} repeats ${settingName(firstPath)}: each doorbell needs its own deviceId`,
  };
}

export function unknownSetting(path: SettingPath): Problem {
  return { path, message: `${settingName(path)} is not a known setting; it is ignored` };
}

/** A warning: the entry is used once, and the doorbell still works. */
export function repeatsDetection(path: SettingPath, firstPath: SettingPath): Problem {
  return { path, message: `${settingName(path)} repeats ${settingName(firstPath)}: each detection gets one motion sensor, so it is ignored` };
}

/** A warning: the doorbell works, without the switch. */
export function chimeSwitchWithoutButton(path: SettingPath): Problem {
  const doorbell = settingName(path.slice(0, -1));
  return { path, message: `${settingName(path)} is ignored: with ${doorbell}.button false there is no ring to chime, so no Chime switch is added` };
}

