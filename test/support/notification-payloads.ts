/**
 * The shapes a notification comes in (docs/cloud-protocol.md), in one table for the parser's, the
 * receiver's and the platform's tests, with what the plugin reads from each: its kind, and for a
 * motion the detection its subtype names.
 */

/** What a payload carries. Ids and the subtype are JSON text, so that ids above 2^53 keep every digit. */
export interface PayloadFields {
  /** `1234567`, or `"1234567"` in quotes. */
  deviceId: string;
  kind: string;
  /** e.g. `"human"`; none when absent. */
  subtype?: string;
  /** The event id, e.g. `"evt-1"` or `6975233002112450000`; none when absent. */
  id?: string;
}

export type Shape = 'flat' | 'subtypeForKind' | 'nested' | 'service';

const field = (key: string, json: string | undefined): string[] => (json === undefined ? [] : [`"${key}": ${json}`]);

/** Each shape's payload; `subtypeForKind` has no kind: its subtype (the kind when none is given) names it. */
export const SHAPES: Record<Shape, (fields: PayloadFields) => string> = {
  flat: ({ deviceId, kind, subtype, id }) =>
    `{${[`"device_id": ${deviceId}`, `"kind": "${kind}"`, ...field('subtype', subtype), ...field('id', id), '"created_at": "2026-11-22T10:00:00Z"'].join(', ')}}`,
  subtypeForKind: ({ deviceId, kind, subtype, id }) => `{${[`"device_id": ${deviceId}`, `"subtype": ${subtype ?? `"${kind}"`}`, ...field('id', id)].join(', ')}}`,
  nested: ({ deviceId, kind, subtype, id }) =>
    `{"action": "x", "ding": {${[`"doorbot_id": ${deviceId}`, `"kind": "${kind}"`, ...field('subtype', subtype), ...field('id', id)].join(', ')}}}`,
  // The doorbell service's own: the kind in the category, the detection and event id in the ding.
  service: ({ deviceId, kind, subtype, id }) =>
    `{"android_config": {"category": "com.ring.pn.live-event.${kind}"}, "data": {"device": {"id": ${deviceId}}, "event": {"ding": {${[...field('subtype', subtype), ...field('id', id)].join(', ')}}}}}`,
};

export const SHAPE_NAMES = Object.keys(SHAPES) as Shape[];

/** The subtypes that name a detection; every other subtype is plain motion. */
const DETECTION_OF = new Map([
  ['human', 'person'],
  ['vehicle', 'vehicle'],
  ['package_delivery', 'package'],
  ['package_pickup', 'package'],
  ['animal', 'animal'],
  ['other_motion', 'other'],
]);

/** Every subtype of a motion the service sends: each detection's, and plain motion's own. */
export const MOTION_SUBTYPES = [...DETECTION_OF.keys(), 'motion'];

/** The kind and detection the plugin reads from a payload of this shape (`subtype` as a value, not JSON text). */
export function readFrom(shape: Shape, kind: string, subtype?: unknown): { kind: string; detection?: string } {
  const named = typeof subtype === 'string' ? subtype : undefined;
  const detection = named === undefined ? undefined : DETECTION_OF.get(named);
  const read = shape === 'subtypeForKind' && named !== undefined ? (detection === undefined ? named : 'motion') : kind;
  return read === 'motion' && detection !== undefined ? { kind: read, detection } : { kind: read };
}

/** Every shape × kind (a motion, a ring, another) × subtype (each detection, plain motion, none): a payload and what it reads as. */
export const PAYLOADS = SHAPE_NAMES.flatMap((shape) =>
  ['motion', 'ding', 'on_demand'].flatMap((kind) =>
    [...MOTION_SUBTYPES, undefined].map((subtype) => ({
      shape,
      kind,
      subtype,
      text: (deviceId: string, id?: string) => SHAPES[shape]({ deviceId, kind, subtype: subtype === undefined ? undefined : `"${subtype}"`, id }),
      reads: readFrom(shape, kind, subtype),
    })),
  ),
);
