import type { Detection } from '../values/detection.js';
import { exactDeviceId, isJsonObject, JsonNumber, parseJsonKeepingNumberText } from '../values/json.js';

/** One delivered doorbell event, read from a push body (docs/cloud-protocol.md). */
export interface DoorbellNotification {
  /** The doorbell's int64 id as an exact decimal string. */
  deviceId: string;
  /** The event type (`motion`, `ding`, ...); the platform decides which ones matter. */
  kind: string;
  /** The event id, used to drop redeliveries. An integer id is kept as its exact decimal text. */
  id?: string;
  /** What a motion saw (a person, a vehicle, a package, an animal, other motion); absent for plain motion and other kinds. */
  detection?: Detection;
  /**
   * When the relay received it, by the relay's clock, in unix seconds: the `time` of the relay message
   * that carried it. Never read from the body, which anyone who knows the push address writes; absent
   * for a direct delivery.
   */
  relayTime?: number;
}

export type ParseResult = { ok: true; notification: DoorbellNotification } | { ok: false; reason: string };

const DEVICE_ID_KEYS = ['device_id', 'doorbot_id'];

/** The service's subtypes of a motion, and the detection each one reports. A Map: no key of Object's prototype matches. */
export const DETECTION_OF_SUBTYPE: ReadonlyMap<string, Detection | undefined> = new Map([
  ['human', 'person'],
  ['vehicle', 'vehicle'],
  // A parcel left at the door and one taken away are both a package at the door.
  ['package_delivery', 'package'],
  ['package_pickup', 'package'],
  ['animal', 'animal'],
  ['other_motion', 'other'],
  ['motion', undefined],
]);

/** Where a shape keeps each field, for the reasons a bad notification is refused with. */
interface FieldNames {
  deviceId: string;
  kind: string;
  id: string;
}

const EVENT_FIELDS: FieldNames = { deviceId: 'device_id/doorbot_id', kind: 'kind/subtype', id: 'id' };
const SERVICE_PAYLOAD_FIELDS: FieldNames = { deviceId: 'data.device.id', kind: 'android_config.category', id: 'data.event.ding.id' };

/** Parses a push body. Reasons are fixed phrases: they never echo the body, which the log must not see. */
export function parseNotification(text: string): ParseResult {
  let document: unknown;
  try {
    document = parseJsonKeepingNumberText(text);
  } catch (error) {
    if (error instanceof SyntaxError) {
      return invalid('body is not valid JSON');
    }
    // The reviver walks the parsed value recursively, so absurd nesting overflows the stack.
    if (error instanceof RangeError) {
      return invalid('JSON is nested too deeply');
    }
    throw error;
  }
  if (!isJsonObject(document)) {
    return invalid('body is not a JSON object');
  }
  if (isJsonObject(document.android_config) && isJsonObject(document.data)) {
    return readServicePayload(document.android_config, document.data);
  }
  return readEvent(isJsonObject(document.ding) ? document.ding : document);
}

/**
 * The flat shape, or the object under `ding` of the nested one. `kind` wins over `subtype` when both
 * are sent; without `kind`, a motion's subtype (`human`, ...) stands for the kind `motion`, and any
 * other subtype (`ding`) for itself.
 */
function readEvent(event: Record<string, unknown>): ParseResult {
  const { subtype } = event;
  const kind = Object.hasOwn(event, 'kind') ? event.kind : isMotionSubtype(subtype) ? 'motion' : subtype;
  return notificationOf(firstPresent(event, DEVICE_ID_KEYS), kind, event.id, EVENT_FIELDS, subtype);
}

/**
 * The doorbell service's own payload, as its phone apps receive it: the kind is the last part of the
 * category (`com.ring.pn.live-event.motion`), whatever the detection's subtype (a person, a vehicle:
 * all are motion); the subtype then says what the motion saw.
 */
function readServicePayload(androidConfig: Record<string, unknown>, data: Record<string, unknown>): ParseResult {
  const { category } = androidConfig;
  const kind = typeof category === 'string' ? category.slice(category.lastIndexOf('.') + 1) : undefined;
  const device = isJsonObject(data.device) ? data.device : {};
  const event = isJsonObject(data.event) ? data.event : {};
  const ding = isJsonObject(event.ding) ? event.ding : {};
  return notificationOf(device.id, kind, ding.id, SERVICE_PAYLOAD_FIELDS, ding.subtype);
}

function notificationOf(deviceIdValue: unknown, kind: unknown, idValue: unknown, fields: FieldNames, subtype: unknown): ParseResult {
  const deviceId = exactDeviceId(deviceIdValue);
  if (deviceId === undefined) {
    return invalid(`${fields.deviceId} is missing or not an integer from 1 to 9223372036854775807`);
  }
  if (typeof kind !== 'string' || kind === '') {
    return invalid(`${fields.kind} is missing or not a non-empty string`);
  }
  const id = idValue === undefined ? undefined : asEventId(idValue);
  if (idValue !== undefined && id === undefined) {
    return invalid(`${fields.id} is neither a string nor an integer`);
  }
  const detection = kind === 'motion' && isMotionSubtype(subtype) ? DETECTION_OF_SUBTYPE.get(subtype) : undefined;
  return { ok: true, notification: { deviceId, kind, ...(id === undefined ? {} : { id }), ...(detection === undefined ? {} : { detection }) } };
}

/** Absent, not a string or unknown (`package` without `_delivery`, say): not a motion's subtype, so plain motion beside `kind: "motion"`. */
function isMotionSubtype(subtype: unknown): subtype is string {
  return typeof subtype === 'string' && DETECTION_OF_SUBTYPE.has(subtype);
}

/** The value of the first key the object has. */
function firstPresent(object: Record<string, unknown>, keys: string[]): unknown {
  const key = keys.find((candidate) => Object.hasOwn(object, candidate));
  return key === undefined ? undefined : object[key];
}

/** `"7"` and `7` are the same event id. */
function asEventId(value: unknown): string | undefined {
  if (typeof value === 'string') {
    return value;
  }
  return value instanceof JsonNumber && value.isInteger() ? value.source : undefined;
}

function invalid(reason: string): ParseResult {
  return { ok: false, reason };
}

/**
 * The push_notification_token registered with the doorbell service: the address a notification is
 * delivered to. Knowing it is what authorises a delivery, so it is a secret. The plugin registers it
 * and the settings page's test motion sends to it, so both compute it here.
 */

/** Direct mode: the receiver's capability URL. */
export function directPushToken(publicUrl: string, receiverSecret: string): string {
  return `${publicUrl}/push/${receiverSecret}`;
}

/**
 * Relay mode: the topic URL, as a UnifiedPush endpoint. `up=1` makes a relay with subscriber-based
 * rate limiting (ntfy.sh) charge this subscriber, not the doorbell cloud every user shares, and keeps
 * the body as it is (never an attachment, never forwarded to a phone push service).
 */
export function relayPushToken(relayUrl: string, topic: string): string {
  return `${relayUrl}/${topic}?up=1`;
}
