import { exactDeviceId, JsonNumber, parseJsonKeepingNumberText } from '../values/exact-json.js';
import { isJsonObject } from '../values/json.js';

/**
 * The account's devices as the doorbell service lists them (docs/cloud-protocol.md): the lists that
 * hold doorbells are the account's own, those shared with it, and cameras, which send motion alerts
 * the same way. Chimes, and any list the service may add, are not doorbells.
 */
const DOORBELL_LISTS = ['doorbots', 'authorized_doorbots', 'stickup_cams'] as const;

type DoorbellListName = (typeof DOORBELL_LISTS)[number];

/** One doorbell of the account. */
export interface AccountDoorbell {
  /** The int64 id as its exact decimal digits. */
  deviceId: string;
  /** The name the doorbell app shows, or `Doorbell <deviceId>` when the service gives none. */
  name: string;
  /** The model, as the service names it; absent when it gives none. */
  kind?: string;
  /** Which list it came from: the account's own doorbells, shared ones, or cameras. */
  list: DoorbellListName;
  /**
   * The battery's charge in percent (0 to 100); null when the service says there is none (a wired
   * doorbell); absent when the entry does not say, or says something that is not a percentage.
   */
  battery?: number | null;
  /** Whether the service reaches the doorbell; absent when the entry does not say. */
  online?: boolean;
}

export interface DoorbellList {
  doorbells: AccountDoorbell[];
  /** Entries of the doorbell lists left out: not an object, or without a usable id. */
  skipped: number;
}

/**
 * Reads the body of the device list; undefined when it is not a JSON object. Everything else is
 * tolerated entry by entry: a list that is missing or not an array holds nothing, a bad entry is
 * skipped and counted, and a device listed twice (own and shared, say) is kept once.
 */
export function readDoorbellList(body: string): DoorbellList | undefined {
  let document: unknown;
  try {
    document = parseJsonKeepingNumberText(body);
  } catch {
    return undefined;
  }
  if (!isJsonObject(document)) {
    return undefined;
  }
  const doorbells = new Map<string, AccountDoorbell>();
  let skipped = 0;
  for (const list of DOORBELL_LISTS) {
    const entries = document[list];
    for (const entry of Array.isArray(entries) ? (entries as unknown[]) : []) {
      const doorbell = readEntry(entry, list);
      if (doorbell === undefined) {
        skipped += 1;
      } else if (!doorbells.has(doorbell.deviceId)) {
        doorbells.set(doorbell.deviceId, doorbell);
      }
    }
  }
  return { doorbells: [...doorbells.values()], skipped };
}

function readEntry(entry: unknown, list: DoorbellListName): AccountDoorbell | undefined {
  if (!isJsonObject(entry)) {
    return undefined;
  }
  const deviceId = exactDeviceId(entry.id);
  if (deviceId === undefined) {
    return undefined;
  }
  const description = typeof entry.description === 'string' ? entry.description.trim() : '';
  const kind = typeof entry.kind === 'string' && entry.kind !== '' ? entry.kind : undefined;
  const battery = readBattery(entry.battery_life);
  const online = readConnection(entry.alerts);
  return {
    deviceId,
    name: description === '' ? `Doorbell ${deviceId}` : description,
    ...(kind === undefined ? {} : { kind }),
    list,
    ...(battery === undefined ? {} : { battery }),
    ...(online === undefined ? {} : { online }),
  };
}

/** A number, or a decimal string, from 0 to 100; null for null; undefined for anything else. */
function readBattery(value: unknown): number | null | undefined {
  if (value === null) {
    return null;
  }
  // The exact-JSON parser keeps a number as its text; a string must be a plain decimal.
  let level: number | undefined;
  if (value instanceof JsonNumber) {
    level = Number(value.source);
  } else if (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)) {
    level = Number(value);
  }
  return level !== undefined && level >= 0 && level <= 100 ? level : undefined;
}

/** `alerts.connection`: "online" or "offline"; anything else says nothing. */
function readConnection(alerts: unknown): boolean | undefined {
  if (!isJsonObject(alerts)) {
    return undefined;
  }
  return alerts.connection === 'online' ? true : alerts.connection === 'offline' ? false : undefined;
}
