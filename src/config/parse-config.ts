import { CONTROL_SUBTYPES, CONTROLS, type MinutesSetting } from '../values/controls.js';
import { isJsonObject } from '../values/json.js';
import { PLATFORM_NAME } from '../settings.js';
import type { SchemaBlock, SchemaDoorbell } from './config-schema.js';
import { type SettingPath, controlWithoutButton, minutesWithoutSwitch, mustBe, repeatsDetection } from './messages.js';
import { toPushSettings, withoutTrailingSlashes, type Environment, type PushSettings } from './push-settings.js';
import { checkBlock, withoutUnknownSettings } from './schema-check.js';

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

/** The settings every stage after the check uses: addresses without trailing slashes, every default in. */
export type PlatformSettings = Pick<SchemaBlock, 'account' | 'doorbellServerUrl' | 'doorbellAccessToken' | 'alertsSensor'> & {
  doorbells: DoorbellSettings[];
  push: PushSettings;
};

/**
 * `problems` are log lines, one per problem. With `ok` they name the doorbells left out (none left
 * out: no problems); with `invalid` nothing is usable and nothing may reach the network. `warnings`
 * name the unknown keys, and settings of a usable doorbell that change nothing; neither changes anything else.
 */
export type ConfigResult =
  | { status: 'unconfigured'; warnings: string[] }
  | { status: 'invalid'; problems: string[]; warnings: string[] }
  | { status: 'ok'; settings: PlatformSettings; problems: string[]; warnings: string[] };

/** Keys Homebridge itself keeps in every platform block. */
const HOMEBRIDGE_KEYS = new Set(['platform', '_bridge']);

/** What the Homebridge UI's form writes into the account block by itself: the schema's defaults. */
const FORM_DEFAULT_ACCOUNT_KEYS = new Set(['majorVersion', 'minorVersion']);

export function parseConfig(raw: unknown, environment: Environment = {}): ConfigResult {
  if (!isJsonObject(raw)) {
    return { status: 'invalid', problems: [`the ${PLATFORM_NAME} platform block must be a JSON object`], warnings: [] };
  }
  const known = withoutUnknownSettings(withoutHomebridgeKeys(raw));
  const warnings = known.unknown.map((problem) => problem.message);
  const block = withoutUnusedAccount(known.block);
  if (Object.keys(block).every((key) => key === 'name')) {
    return { status: 'unconfigured', warnings };
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
  return { status: 'ok', settings: toSettings(config, doorbells, environment), problems: messages, warnings: [...warnings, ...ignored] };
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
 * nothing else is no account; one with anything more (an e-mail, say) is checked as it stands.
 */
function withoutUnusedAccount(block: Record<string, unknown>): Record<string, unknown> {
  const { account, ...rest } = block;
  const unused = isJsonObject(account) && Object.keys(account).every((key) => FORM_DEFAULT_ACCOUNT_KEYS.has(key));
  return unused ? rest : block;
}

function toSettings(config: SchemaBlock, doorbells: SchemaDoorbell[], environment: Environment): PlatformSettings {
  return {
    ...(config.account === undefined
      ? {}
      : { account: { ...config.account, serverUrl: withoutTrailingSlashes(config.account.serverUrl) } }),
    doorbellServerUrl: withoutTrailingSlashes(config.doorbellServerUrl),
    ...(config.doorbellAccessToken === undefined ? {} : { doorbellAccessToken: config.doorbellAccessToken }),
    doorbells: doorbells.map((doorbell) => ({
      ...doorbell,
      name: doorbell.name ?? `Doorbell ${doorbell.deviceId}`,
      motionTimeout: doorbell.motionTimeout ?? config.motionTimeout,
      detections: [...new Set(doorbell.detections)],
    })),
    alertsSensor: config.alertsSensor,
    push: toPushSettings(config.push, environment),
  };
}

/** The index of the doorbell entry a problem lies in; undefined for the rest of the block. */
function doorbellIndexOf(path: SettingPath): number | undefined {
  return path[0] === 'doorbells' && typeof path[1] === 'number' ? path[1] : undefined;
}
