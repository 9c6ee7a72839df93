import { platformSchema, type SchemaNode } from './config-schema.js';

/**
 * The log lines for a bad platform block. Each names one setting the way a user writes it in
 * config.json (`doorbells[1].deviceId`, indexes from 0) and says what is expected, in words made from
 * the setting's place in config.schema.json: its type, its limits, its choices, and where a pattern
 * cannot say it, its `x-must-be`. None ever contains a configured value, so the verification code
 * and the access token cannot leak.
 */

/** A place in the platform block: property names and array indexes. */
export type SettingPath = ReadonlyArray<string | number>;

export interface Problem {
  path: SettingPath;
  message: string;
}

/** What a setting must be, completing "<setting> must be ..."; undefined for a node the words below do not cover. */
export function expectation(node: SchemaNode): string | undefined {
  if (node['x-must-be'] !== undefined) {
    return node['x-must-be'];
  }
  switch (node.type) {
    case 'boolean':
      return 'true or false';
    case 'integer':
      return integerWords(node);
    case 'string':
      return node.enum ? choices(node.enum, 'or') : node.minLength === 1 && node.pattern === undefined ? 'text in quotes, not empty' : undefined;
    case 'array':
      return listWords(node);
    case 'object': {
      const required = node.required ?? node.then?.required ?? [];
      return required.length === 0 ? 'an object' : `an object with ${required.length === 1 ? `a ${required[0]}` : inWords(required, 'and')}`;
    }
    default:
      return undefined;
  }
}

function integerWords({ minimum, maximum }: SchemaNode): string | undefined {
  if (minimum !== undefined && maximum !== undefined) {
    return `an integer from ${minimum} to ${maximum}`;
  }
  return minimum === undefined ? undefined : `an integer of ${minimum} or more`;
}

/** A list of choices (`detections`), or of entries that are each checked on their own (`doorbells`). */
function listWords({ items, minItems, maxItems, title }: SchemaNode): string | undefined {
  if (items?.enum !== undefined) {
    return `a list of any of ${choices(items.enum, 'and')}, like [${JSON.stringify(items.enum[0])}]`;
  }
  if (items?.type === 'object' && minItems !== undefined && maxItems !== undefined && title !== undefined) {
    return `a list of ${minItems} to ${maxItems} ${title.toLowerCase()}, at least one of them valid`;
  }
  // An account's doorbells in an entry of `accounts`, which may be none yet.
  if (items?.type === 'object' && minItems === undefined && maxItems !== undefined && title !== undefined) {
    return `a list of up to ${maxItems} ${title.toLowerCase()}`;
  }
  return undefined;
}

function choices(values: readonly unknown[], last: 'and' | 'or'): string {
  return inWords(values.map((value) => JSON.stringify(value)), last);
}

/** `a, b and c` */
function inWords(words: readonly string[], last: 'and' | 'or'): string {
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} ${last} ${words[words.length - 1]}`;
}

/** The schema's node for a setting, any index of a list standing for its items; undefined for a setting it does not declare. */
export function schemaNodeAt(path: SettingPath, root: SchemaNode = platformSchema()): SchemaNode | undefined {
  return path.reduce<SchemaNode | undefined>(
    (node, part) => (typeof part === 'number' ? node?.items : node?.properties !== undefined && Object.hasOwn(node.properties, part) ? node.properties[part] : undefined),
    root,
  );
}

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

/** `doorbells[].deviceId`: the same name for every index. */
export function genericName(path: SettingPath): string {
  return joinPath(path, () => '[]');
}

export function mustBe(path: SettingPath): Problem {
  const node = schemaNodeAt(path);
  const expected = node === undefined ? undefined : expectation(node);
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

/**
 * A setting its parent requires unless another is set (an `if` that requires that one, and an `else`
 * that requires this) says so, the other named where it stands (`accounts[1].doorbellAccessToken`).
 * At the top of the block that rule sits inside the `then` that applies without `accounts`.
 */
export function isRequired(path: SettingPath): Problem {
  const key = String(path[path.length - 1]);
  const parentPath = path.slice(0, -1);
  const parent = schemaNodeAt(parentPath);
  const conditional = [parent, parent?.then].find((node) => node?.else?.required?.includes(key));
  const unless = conditional?.if?.required?.map((other) => settingName([...parentPath, other]));
  const name = settingName(path);
  return { path, message: unless === undefined ? `${name} is required` : `${name} is required unless ${inWords(unless, 'or')} is set` };
}

/** `accounts` beside a key of the one account at the top: which shape is meant is the user's to say. */
export function besideAccounts(key: string): Problem {
  return { path: [key], message: `${key} and accounts cannot both be set: with accounts, each account's ${key} goes in its entry of accounts` };
}

/** An entry of `accounts` whose label another entry already has, in any case. */
export function repeatsLabel(path: SettingPath, firstPath: SettingPath): Problem {
  return { path, message: `${settingName(path)} repeats ${settingName(firstPath)}: each account needs its own label, so this account is left out` };
}

/** An entry of `accounts` for the account an earlier entry already serves. */
export function repeatsAccount(path: SettingPath, firstPath: SettingPath): Problem {
  return {
    path,
    message:
      `${settingName(path)} is the same account as ${settingName(firstPath)} ` +
      '(the same account server and e-mail, or doorbell server and access token): each account is listed once, so this one is left out',
  };
}

/** A warning: a device id in two accounts' doorbells, which the first account serves. */
export function deviceIdInAnotherAccount(path: SettingPath, firstPath: SettingPath): Problem {
  return { path, message: `${settingName(path)} repeats ${settingName(firstPath)}: the first account serves that doorbell, so this entry is ignored` };
}

/** A doorbell past the most one bridge can show, counted over every account. */
export function pastDoorbellLimit(path: SettingPath, limit: number): Problem {
  return { path, message: `${settingName(path)} is left out: at most ${limit} doorbells in all accounts together` };
}

/** An info line: an account with no doorbells yet works, and has nothing to show. */
export function noDoorbellsYet(path: SettingPath, label: string): Problem {
  return { path, message: `${settingName(path)} (${label}) has no doorbells yet: add them from its account's doorbells on the settings page` };
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

/** A warning: minutes for a switch the doorbell does not have. `switchPath`: the setting that adds it. */
export function minutesWithoutSwitch(path: SettingPath, switchPath: SettingPath, suffix: string): Problem {
  return { path, message: `${settingName(path)} is ignored: without ${settingName(switchPath)} true there is no ${suffix} switch to turn on again` };
}

/** A warning: the doorbell works, without the switch. `suffix`: the switch's name after the doorbell's. */
export function controlWithoutButton(path: SettingPath, suffix: string): Problem {
  const doorbell = settingName(path.slice(0, -1));
  return { path, message: `${settingName(path)} is ignored: with ${doorbell}.button false there is no ring to chime, so no ${suffix} switch is added` };
}

