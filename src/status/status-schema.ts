import type { SchemaObject } from 'ajv';
import { MAX_OUTAGES } from '../alerts/alerts-state.js';
import type { DropCause, SessionState } from './delivery-status.js';

/**
 * The JSON schema of status.json (delivery-status.ts has its type). Compiled when the code is written
 * (`npm run validators`, into status-check.generated.js), not when the plugin starts: nothing at run
 * time imports this file.
 */

/** Where the session stands, every state status.json may name. */
const SESSION_STATES: readonly SessionState[] = ['signing-in', 'signed-in', 'token', 'signed-out', 'expired', 'token-refused'];

/** A time as an ISO string: the `date-time` format is what Date.parse reads (values/time.ts). */
const time = { type: 'string', format: 'date-time' } as const;
const timeOrNull = { anyOf: [time, { type: 'null' }] } as const;

const DOORBELL_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['deviceId', 'name', 'subscribed', 'fault', 'lastMotionAt', 'lastRingAt'],
  properties: {
    deviceId: { type: 'string', pattern: '^[1-9][0-9]{0,18}$' },
    name: { type: 'string' },
    subscribed: { type: 'boolean' },
    fault: { type: ['string', 'null'] },
    lastMotionAt: timeOrNull,
    lastRingAt: timeOrNull,
  },
};

const DROP_CAUSES: readonly DropCause[] = ['invalid', 'duplicate', 'unconfigured', 'stale', 'flood'];

/** Counts by cause, every cause present. */
const DROPPED_SCHEMA: SchemaObject = {
  type: 'object',
  required: DROP_CAUSES,
  properties: Object.fromEntries(DROP_CAUSES.map((cause) => [cause, { type: 'integer', minimum: 0 }])),
};

const ALERTS_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['flowing', 'since', 'reason'],
  properties: { flowing: { type: 'boolean' }, since: time, reason: { type: ['string', 'null'] } },
};

const OUTAGE_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['from', 'to', 'reason'],
  properties: { from: time, to: timeOrNull, reason: { type: 'string' } },
};

/**
 * What the plugin writes; a reader takes other keys too, as a newer plugin may add some. Keys added
 * later (`signedInAt`, `dropped`, `alerts`, `outages`) are not required: a file an earlier version
 * wrote lacks them, and is still read.
 */
export const STATUS_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['pid', 'startedAt', 'updatedAt', 'pushMode', 'registeredAt', 'nextRefreshAt', 'session', 'doorbells'],
  properties: {
    pid: { type: 'integer', minimum: 1 },
    startedAt: time,
    updatedAt: time,
    pushMode: { enum: ['relay', 'direct'] },
    relay: { type: 'object', required: ['connected', 'since'], properties: { connected: { type: 'boolean' }, since: timeOrNull } },
    receiver: { type: 'object', required: ['listening'], properties: { listening: { type: 'boolean' } } },
    registeredAt: timeOrNull,
    nextRefreshAt: timeOrNull,
    session: { enum: SESSION_STATES },
    // Not required: a status written by an older plugin has none.
    signedInAt: timeOrNull,
    doorbells: { type: 'array', items: DOORBELL_SCHEMA },
    dropped: DROPPED_SCHEMA,
    alerts: ALERTS_SCHEMA,
    outages: { type: 'array', maxItems: MAX_OUTAGES, items: OUTAGE_SCHEMA },
  },
};
