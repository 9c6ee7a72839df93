import { CONTROL_SUBTYPES, CONTROLS, type MinutesSetting } from '../values/controls.js';
import { isJsonObject } from '../values/json.js';
import { PLATFORM_NAME } from '../settings.js';
import { accountKey } from '../values/address.js';
import { type AccountSettings, type SchemaAccountEntry, type SchemaBlock, type SchemaDoorbell, platformSchema } from './config-schema.js';
import {
  type Problem,
  type SettingPath,
  besideAccounts,
  controlWithoutButton,
  isRequired,
  deviceIdInAnotherAccount,
  minutesWithoutSwitch,
  mustBe,
  noDoorbellsYet,
  pastDoorbellLimit,
  repeatsAccount,
  repeatsDetection,
  repeatsLabel,
  schemaNodeAt,
} from './messages.js';
import { toPushSettings, withoutTrailingSlashes, type Environment, type PushSettings } from './push-settings.js';
import { checkBlock, isFormBlank, withoutUnknownSettings } from './schema-check.js';

export type { AccountSettings } from './config-schema.js';
export type { PushSettings, RelaySettings } from './push-settings.js';

/**
 * The platform block, checked against config.schema.json (see schema-check.ts) and turned into one
 * typed object with every default filled in.
 *
 * Unknown keys (a note, a misspelt `motionTimout`, a setting of a newer version after a downgrade)
 * are named in a warning each, so none goes unused without a word, and otherwise ignored: none is a
 * reason to switch the plugin off. The keys Homebridge itself keeps in the block are not ours to judge.
 */

/**
 * A doorbell entry with every default filled in: its own name (`Doorbell <deviceId>` by default) and
 * motion timeout (the platform's by default), each detection once; every other setting as the schema
 * declares it, so a new one reaches the accessory without a word here. A switch's minutes have no
 * default: absent, the switch stays off until turned on.
 */
export type DoorbellSettings = Required<Omit<SchemaDoorbell, MinutesSetting>> & Pick<SchemaDoorbell, MinutesSetting>;

/**
 * The settings every stage after the check uses: addresses without trailing slashes, every default in.
 * With `accounts`, `account`, `doorbellServerUrl`, `doorbellAccessToken` and `doorbells` here are the
 * first usable account's, so a stage that knows only one account keeps working; `ConfigResult.accounts`
 * has them all.
 */
export type PlatformSettings = Pick<SchemaBlock, 'account' | 'doorbellServerUrl' | 'doorbellAccessToken' | 'alertsSensor'> & {
  doorbells: DoorbellSettings[];
  push: PushSettings;
};

/** What every account has, usable or left out. */
interface AccountBase {
  /** The entry's label, trimmed, or `Account <n>` by default; undefined for the one account at the top of the block. */
  label: string | undefined;
  /** Its doorbells with every default filled in, in config order; for an entry left out, those that could be read. */
  doorbells: DoorbellSettings[];
}

/** An account the plugin signs in to (or reaches with its access token) and serves the doorbells of. */
export interface UsableAccount extends AccountBase {
  /**
   * Its key (accountKey, values/address.ts): set for every entry of `accounts`; for the one account at the top of
   * the block, whenever its fields give one (a valid block's always do).
   */
  key: string | undefined;
  /** Where its session and installation files live, inside the plugin's storage folder: '' (the folder itself) for the account at the top, `accounts/<key>` for an entry. */
  folder: string;
  account?: AccountSettings;
  doorbellServerUrl: string;
  doorbellAccessToken?: string;
  fault?: undefined;
}

/**
 * An entry of `accounts` left out (a bad setting, a repeated label, an account an earlier entry
 * already has): nothing of it reaches the network, and its doorbells stay registered with a fault.
 */
export interface FaultedAccount extends AccountBase {
  label: string;
  /** Known when only a repeat left it out. */
  key: string | undefined;
  folder: string | undefined;
  account?: undefined;
  doorbellServerUrl?: undefined;
  doorbellAccessToken?: undefined;
  /** The first problem that left it out, as `problems` words it. */
  fault: string;
}

export type ParsedAccount = UsableAccount | FaultedAccount;

/**
 * `problems` are log lines, one per problem. With `ok` they name the doorbells and accounts left out
 * (none left out: no problems); with `invalid` nothing is usable and nothing may reach the network.
 * `warnings` name the unknown keys, and settings of a usable doorbell that change nothing; neither
 * changes anything else. `notes` are info lines: an account with no doorbells yet.
 *
 * `accounts` lists every account in config order: the one account at the top of the block, or each
 * entry of `accounts`.
 */
export type ConfigResult =
  | { status: 'unconfigured'; warnings: string[] }
  | { status: 'invalid'; problems: string[]; warnings: string[] }
  | { status: 'ok'; settings: PlatformSettings; accounts: ParsedAccount[]; problems: string[]; warnings: string[]; notes: string[] };

/** Keys Homebridge itself keeps in every platform block. */
const HOMEBRIDGE_KEYS = new Set(['platform', '_bridge']);

/** What the Homebridge UI's form writes into the account block by itself: the schema's defaults. */
const FORM_DEFAULT_ACCOUNT_KEYS = new Set(['majorVersion', 'minorVersion']);

/** The keys of the one account at the top of the block, which an entry of `accounts` holds instead. */
const TOP_LEVEL_ACCOUNT_KEYS = ['account', 'doorbellServerUrl', 'doorbellAccessToken', 'doorbells'] as const;

/** The most doorbells one bridge shows: a HomeKit bridge takes 150 accessories, and Doorbell Alerts is one. */
const MOST_DOORBELLS = 149;

export function parseConfig(raw: unknown, environment: Environment = {}): ConfigResult {
  if (!isJsonObject(raw)) {
    return { status: 'invalid', problems: [`the ${PLATFORM_NAME} platform block must be a JSON object`], warnings: [] };
  }
  const known = withoutUnknownSettings(withoutHomebridgeKeys(raw));
  const warnings = known.unknown.map((problem) => problem.message);
  const block = withoutUnusedAccounts(known.block);
  if (Object.keys(block).every((key) => key === 'name')) {
    return { status: 'unconfigured', warnings };
  }
  if (Object.hasOwn(block, 'accounts')) {
    return parseAccounts(block, warnings, environment);
  }

  const { data, problems } = checkBlock(block);
  const messages = problems.map((problem) => problem.message);
  if (problems.some((problem) => doorbellIndexOf(problem.path) === undefined)) {
    return { status: 'invalid', problems: messages, warnings };
  }
  // Every problem now lies inside a doorbell entry, so the rest of the block passed the schema.
  const config = data as unknown as SchemaBlock;
  const leftOut = new Set(problems.map((problem) => doorbellIndexOf(problem.path)));
  const kept = [...config.doorbells.entries()].filter(([index]) => !leftOut.has(index));
  if (kept.length === 0) {
    return { status: 'invalid', problems: [...messages, mustBe(['doorbells']).message], warnings };
  }
  const doorbells = kept.map(([, doorbell]) => doorbell);
  const ignored = kept.flatMap(([index, doorbell]) => doorbellWarnings(doorbell, ['doorbells', index]));
  const settings = toSettings(config, { ...config, doorbells: toDoorbellSettings(doorbells, config.motionTimeout) }, environment);
  const account: UsableAccount = { label: undefined, key: accountKey(settings), folder: '', ...accountFields(settings) };
  return { status: 'ok', settings, accounts: [account], problems: messages, warnings: [...warnings, ...ignored], notes: [] };
}

/** An entry of `accounts` once its own settings are checked: what it holds and what its doorbells are. */
interface EntryState {
  index: number;
  label: string;
  /** Present when the entry passed the schema; its doorbells are then schema-valid too, those left out aside. */
  entry: SchemaAccountEntry | undefined;
  /** The doorbells that could be read, with their index in the entry. */
  doorbells: Array<[number, SchemaDoorbell]>;
  key: string | undefined;
  fault: string | undefined;
}

/**
 * A block with `accounts`: each entry is one account. A bad entry leaves its account out and the
 * others work; the block is invalid only when something outside the entries is bad, or no account is
 * left.
 */
function parseAccounts(block: Record<string, unknown>, warnings: string[], environment: Environment): ConfigResult {
  const conflicts = TOP_LEVEL_ACCOUNT_KEYS.filter((key) => Object.hasOwn(block, key)).map(besideAccounts);
  const { data, problems } = checkBlock(block);
  if (conflicts.length > 0 || problems.some((problem) => entryIndexOf(problem.path) === undefined)) {
    return { status: 'invalid', problems: [...conflicts, ...problems].map(({ message }) => message), warnings };
  }
  // Every problem now lies inside an entry, so the rest of the block, `accounts` included, passed the schema.
  const config = data as unknown as Omit<SchemaBlock, 'accounts'> & { accounts: unknown[] };
  const states = entryStates(config.accounts, problems);
  const later: Problem[] = [...leaveOutRepeats(states)];
  const repeatedIds = leaveOutRepeatedDeviceIds(states);
  later.push(...leaveOutPastLimit(states));
  const accounts = states.map((state) => toParsedAccount(state, config.motionTimeout));
  const messages = [...problems, ...later].map(({ message }) => message);
  const usable = accounts.find((account): account is UsableAccount => account.fault === undefined);
  if (usable === undefined) {
    return { status: 'invalid', problems: [...messages, mustBe(['accounts']).message], warnings };
  }
  const ignored = states.flatMap(({ index, doorbells }) => doorbells.flatMap(([at, doorbell]) => doorbellWarnings(doorbell, ['accounts', index, 'doorbells', at])));
  const doorbellList = schemaNodeAt(['accounts', 0, 'doorbells']);
  const notes = states.filter(({ entry, fault }) => fault === undefined && isFormBlank(entry?.doorbells ?? [], doorbellList)).map(({ index, label }) => noDoorbellsYet(['accounts', index], label).message);
  return {
    status: 'ok',
    // Until every stage knows accounts, the block's own account settings are the first usable account's.
    settings: toSettings(config, usable, environment),
    accounts,
    problems: messages,
    warnings: [...warnings, ...ignored, ...repeatedIds.map(({ message }) => message)],
    notes,
  };
}

/** Each entry with its label (given or by default), what passed the schema, and the doorbells that could be read. */
function entryStates(entries: readonly unknown[], problems: readonly Problem[]): EntryState[] {
  const ownProblems = (index: number) => problems.filter(({ path }) => entryIndexOf(path) === index && doorbellIndexInEntry(path) === undefined);
  const given = entries.map((entry, index) => {
    const label = isJsonObject(entry) ? entry.label : undefined;
    const bad = problems.some(({ path }) => entryIndexOf(path) === index && path[2] === 'label');
    return typeof label === 'string' && !bad ? label.trim() : undefined;
  });
  const labels = withDefaultLabels(given);
  return entries.map((raw, index) => {
    const fault = ownProblems(index)[0]?.message;
    const leftOut = new Set(problems.filter(({ path }) => entryIndexOf(path) === index).map(({ path }) => doorbellIndexInEntry(path)));
    const list = isJsonObject(raw) && Array.isArray(raw.doorbells) && !problems.some(({ path }) => isListOf(path, index)) ? (raw.doorbells as SchemaDoorbell[]) : [];
    return {
      index,
      label: labels[index],
      entry: fault === undefined ? (raw as SchemaAccountEntry) : undefined,
      // A doorbell without a deviceId and without a problem is the form's blank one.
      doorbells: [...list.entries()].filter(([at, doorbell]) => !leftOut.has(at) && isJsonObject(doorbell) && doorbell.deviceId !== undefined),
      key: undefined,
      fault,
    };
  });
}

/** `Account <n>` for each entry without a label: the smallest n, from 1, that no other entry's label uses, in any case. */
function withDefaultLabels(given: ReadonlyArray<string | undefined>): string[] {
  const used = new Set(given.flatMap((label) => (label === undefined ? [] : [label.toLowerCase()])));
  let n = 1;
  return given.map((label) => {
    if (label !== undefined) {
      return label;
    }
    while (used.has(`account ${n}`)) {
      n += 1;
    }
    used.add(`account ${n}`);
    return `Account ${n}`;
  });
}

/**
 * An entry whose label, in any case, or whose account an earlier usable entry already has, is left
 * out. An entry left out for a problem of its own claims neither: a later one may have them.
 */
function leaveOutRepeats(states: EntryState[]): Problem[] {
  const labels = new Map<string, number>();
  const keys = new Map<string, number>();
  const problems: Problem[] = [];
  for (const state of states) {
    if (state.entry === undefined) {
      continue;
    }
    state.key = accountKey(state.entry);
    const firstLabel = labels.get(state.label.toLowerCase());
    const firstKey = state.key === undefined ? undefined : keys.get(state.key);
    // The schema requires doorbellServerUrl and an account (or a token) only of an entry holding something of its own.
    const missing = state.entry.doorbellServerUrl === undefined ? 'doorbellServerUrl' : state.key === undefined ? 'account' : undefined;
    const problem =
      missing !== undefined
        ? isRequired(['accounts', state.index, missing])
        : firstLabel !== undefined
          ? repeatsLabel(['accounts', state.index, 'label'], ['accounts', firstLabel, 'label'])
          : firstKey !== undefined
            ? repeatsAccount(['accounts', state.index], ['accounts', firstKey])
            : undefined;
    if (problem === undefined) {
      labels.set(state.label.toLowerCase(), state.index);
      keys.set(state.key as string, state.index);
    } else {
      problems.push(problem);
      state.entry = undefined;
      state.fault = problem.message;
    }
  }
  return problems;
}

/**
 * A device id in two accounts is served by the first usable account that lists it: each doorbell is
 * one accessory. The doorbells of an entry left out come after every usable one's.
 */
function leaveOutRepeatedDeviceIds(states: EntryState[]): Problem[] {
  const claimed = new Map<string, SettingPath>();
  const warnings: Problem[] = [];
  const usableFirst = [...states.filter(({ fault }) => fault === undefined), ...states.filter(({ fault }) => fault !== undefined)];
  for (const state of usableFirst) {
    state.doorbells = state.doorbells.filter(([at, { deviceId }]) => {
      const path = ['accounts', state.index, 'doorbells', at, 'deviceId'];
      const first = claimed.get(deviceId);
      if (first !== undefined) {
        warnings.push(deviceIdInAnotherAccount(path, first));
        return false;
      }
      claimed.set(deviceId, path);
      return true;
    });
  }
  return warnings;
}

/** The doorbells past the most one bridge shows, counted over every account in config order, are left out. */
function leaveOutPastLimit(states: EntryState[]): Problem[] {
  let count = 0;
  const problems: Problem[] = [];
  for (const state of states) {
    state.doorbells = state.doorbells.filter(([at]) => {
      count += 1;
      if (count > MOST_DOORBELLS) {
        problems.push(pastDoorbellLimit(['accounts', state.index, 'doorbells', at], MOST_DOORBELLS));
        return false;
      }
      return true;
    });
  }
  return problems;
}

function toParsedAccount({ label, entry, doorbells, key, fault }: EntryState, motionTimeout: number): ParsedAccount {
  const settings = toDoorbellSettings(doorbells.map(([, doorbell]) => doorbell), motionTimeout);
  if (entry === undefined || key === undefined || fault !== undefined) {
    return { label, key, folder: key === undefined ? undefined : `accounts/${key}`, doorbells: settings, fault: fault ?? '' };
  }
  return { label, key, folder: `accounts/${key}`, ...accountFields({ ...entry, doorbells: settings }) };
}

/** An account's own settings, addresses without trailing slashes. */
function accountFields(source: Pick<SchemaBlock, 'account' | 'doorbellServerUrl' | 'doorbellAccessToken'> & { doorbells: DoorbellSettings[] }) {
  return {
    ...(source.account === undefined ? {} : { account: { ...source.account, serverUrl: withoutTrailingSlashes(source.account.serverUrl) } }),
    doorbellServerUrl: withoutTrailingSlashes(source.doorbellServerUrl),
    ...(source.doorbellAccessToken === undefined ? {} : { doorbellAccessToken: source.doorbellAccessToken }),
    doorbells: source.doorbells,
  };
}

/**
 * Settings of a usable doorbell entry that change nothing: a detection listed twice, a switch that
 * needs the button (the Chime) without it, a switch's minutes without the switch.
 */
function doorbellWarnings(doorbell: SchemaDoorbell, at: SettingPath): string[] {
  const { detections, button } = doorbell;
  const repeats = detections.flatMap((detection, index) => {
    const first = detections.indexOf(detection);
    return first === index ? [] : [repeatsDetection([...at, 'detections', index], [...at, 'detections', first]).message];
  });
  const unused = button ? [] : CONTROL_SUBTYPES.map((control) => CONTROLS[control]).filter((row) => row.needsButton && doorbell[row.setting]);
  const idleMinutes = CONTROL_SUBTYPES.map((control) => CONTROLS[control]).filter((row) => doorbell[row.minutesSetting] !== undefined && !doorbell[row.setting]);
  return [
    ...repeats,
    ...unused.map((row) => controlWithoutButton([...at, row.setting], row.suffix).message),
    ...idleMinutes.map((row) => minutesWithoutSwitch([...at, row.minutesSetting], [...at, row.setting], row.suffix).message),
  ];
}

function withoutHomebridgeKeys(raw: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(raw).filter(([key]) => !HOMEBRIDGE_KEYS.has(key)));
}

/**
 * The Homebridge UI's settings form saves the account's default version numbers even when nobody
 * filled in the account, as in a set-up with doorbellAccessToken alone. An account block that holds
 * nothing else is no account; one with anything more (an e-mail, say) is checked as it stands. The
 * same goes for each entry of `accounts`.
 */
function withoutUnusedAccounts(block: Record<string, unknown>): Record<string, unknown> {
  const top = withoutFormBlanks(withoutUnusedAccount(block));
  return Array.isArray(top.accounts) ? { ...top, accounts: (top.accounts as unknown[]).map((entry) => (isJsonObject(entry) ? withoutUnusedAccount(entry) : entry)) } : top;
}

/**
 * The Homebridge UI's form draws every list with one entry even when the config has none, filled
 * with the schema's defaults, and saves it so, one more at a time: a block gains entries of
 * `accounts` that hold nothing else, and a block with accounts a top-level `doorbells` of such
 * entries. Neither is the user's: both are left out, so saving the form never turns a working block
 * into one with both shapes, nor fills `accounts` past its limit. (A later entry is then named by its
 * place among the others.) A list with only such entries is kept beside nothing else, so the block
 * still says what is missing; an entry with anything more (a label, a device id) is checked as it stands.
 */
function withoutFormBlanks(block: Record<string, unknown>): Record<string, unknown> {
  const properties = platformSchema().properties ?? {};
  const topLevel = TOP_LEVEL_ACCOUNT_KEYS.some((key) => Object.hasOwn(block, key));
  const entries = Array.isArray(block.accounts) ? (block.accounts as unknown[]) : undefined;
  const own = entries?.filter((entry) => !isFormBlank(entry, properties.accounts?.items));
  if (entries === undefined || own === undefined || (own.length === 0 && !topLevel)) {
    return block;
  }
  if (own.length === 0) {
    return Object.fromEntries(Object.entries(block).filter(([key]) => key !== 'accounts'));
  }
  const formsDoorbells = Array.isArray(block.doorbells) && isFormBlank(block.doorbells, properties.doorbells);
  return Object.fromEntries(Object.entries({ ...block, accounts: own }).filter(([key]) => !(formsDoorbells && key === 'doorbells')));
}


function withoutUnusedAccount(block: Record<string, unknown>): Record<string, unknown> {
  const { account, ...rest } = block;
  const unused = isJsonObject(account) && Object.keys(account).every((key) => FORM_DEFAULT_ACCOUNT_KEYS.has(key));
  return unused ? rest : block;
}

/** The platform-wide settings of `config`, with `account` the account whose settings the block's own fields hold. */
function toSettings(config: Pick<SchemaBlock, 'alertsSensor' | 'push'>, account: ReturnType<typeof accountFields>, environment: Environment): PlatformSettings {
  return {
    ...accountFields(account),
    alertsSensor: config.alertsSensor,
    push: toPushSettings(config.push, environment),
  };
}

function toDoorbellSettings(doorbells: readonly SchemaDoorbell[], motionTimeout: number): DoorbellSettings[] {
  return doorbells.map((doorbell) => ({
    ...doorbell,
    name: doorbell.name ?? `Doorbell ${doorbell.deviceId}`,
    motionTimeout: doorbell.motionTimeout ?? motionTimeout,
    detections: [...new Set(doorbell.detections)],
  }));
}

/** The index of the doorbell entry a problem lies in; undefined for the rest of the block. */
function doorbellIndexOf(path: SettingPath): number | undefined {
  return path[0] === 'doorbells' && typeof path[1] === 'number' ? path[1] : undefined;
}

/** The index of the entry of `accounts` a problem lies in; undefined for the rest of the block, `accounts` itself included. */
function entryIndexOf(path: SettingPath): number | undefined {
  return path[0] === 'accounts' && typeof path[1] === 'number' ? path[1] : undefined;
}

/** Inside an entry of `accounts`, the index of the doorbell a problem lies in. */
function doorbellIndexInEntry(path: SettingPath): number | undefined {
  return path[0] === 'accounts' && path[2] === 'doorbells' && typeof path[3] === 'number' ? path[3] : undefined;
}

/** A problem with the entry's list of doorbells itself (not a list, or too long): none of them can be read. */
function isListOf(path: SettingPath, index: number): boolean {
  return entryIndexOf(path) === index && path[2] === 'doorbells' && path.length === 3;
}
