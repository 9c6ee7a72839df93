import { isJsonObject } from '../values/json.js';

/**
 * The bookkeeping of one-time codes in installation.json, as plain values: which codes the service has
 * answered (spent: never sent again), and which a sign-in is sending right now (claimed). The store
 * applies these under the data folder's lock; codes are known only by their SHA-256.
 */

/**
 * How long a claim holds without the service's decision. A sign-in gives up well before: each of its
 * two calls makes at most five attempts of at most 10 s, with at most a minute between them. So a
 * claim this old belongs to a process that ended mid sign-in (the settings page closed, Homebridge
 * restarted), and its code may be sent again.
 */
export const CLAIM_LIFETIME_MS = 15 * 60_000;

/** Enough to remember every code a user plausibly pastes in, while the file stays small. */
const MAX_CODE_HASHES = 50;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Where a code stands: free to send, being sent by a sign-in under way, or answered by the service. */
export type CodeState = 'unused' | 'under-way' | 'spent';

/** A sign-in with the code is under way since `claimedAt` (ISO time). */
export interface CodeClaim {
  hash: string;
  claimedAt: string;
}

export interface CodeRecord {
  /** Answered by the service. Files of earlier versions also hold their claims here: those stay spent. */
  spentCodeHashes: string[];
  /** Absent in files of earlier versions. */
  claimedCodes?: CodeClaim[];
}

/** The code's state at `now` (ms since the epoch); a claim that has outlived its lifetime is no claim. */
export function codeStateIn(record: CodeRecord | undefined, hash: string, now: number): CodeState {
  if (record === undefined) {
    return 'unused';
  }
  if (record.spentCodeHashes.includes(hash)) {
    return 'spent';
  }
  return liveClaims(record, now).some((claim) => claim.hash === hash) ? 'under-way' : 'unused';
}

/** The record with the code claimed at `now`; the caller checked it is unused. */
export function withClaim<T extends CodeRecord>(record: T, hash: string, now: number): T {
  const claim = { hash, claimedAt: new Date(now).toISOString() };
  return { ...record, claimedCodes: [...otherLiveClaims(record, hash, now), claim].slice(-MAX_CODE_HASHES) };
}

/** The record with the code spent (and no longer claimed). */
export function withSpent<T extends CodeRecord>(record: T, hash: string, now: number): T {
  const spent = record.spentCodeHashes.includes(hash) ? record.spentCodeHashes : [...record.spentCodeHashes, hash];
  return { ...record, spentCodeHashes: spent.slice(-MAX_CODE_HASHES), claimedCodes: otherLiveClaims(record, hash, now) };
}

/** The record without the code's claim; unchanged (the same object) when it holds none. */
export function withoutClaim<T extends CodeRecord>(record: T, hash: string, now: number): T {
  if (!(record.claimedCodes ?? []).some((claim) => claim.hash === hash)) {
    return record;
  }
  return { ...record, claimedCodes: otherLiveClaims(record, hash, now) };
}

/** The shape check of the two fields, for the file's guard. */
export function isCodeRecord(value: Record<string, unknown>): boolean {
  const claims = value.claimedCodes;
  return (
    Array.isArray(value.spentCodeHashes) &&
    value.spentCodeHashes.every(isCodeHash) &&
    (claims === undefined || (Array.isArray(claims) && claims.every(isCodeClaim)))
  );
}

/**
 * Claims still holding at `now`. Measured both ways: a claim stamped in the future (the host clock was
 * set back) holds no longer than its lifetime either, so no clock step leaves a code claimed for good.
 */
function liveClaims(record: CodeRecord, now: number): CodeClaim[] {
  return (record.claimedCodes ?? []).filter((claim) => Math.abs(now - Date.parse(claim.claimedAt)) < CLAIM_LIFETIME_MS);
}

/** Each write keeps only the claims still holding, so expired ones leave the file. */
function otherLiveClaims(record: CodeRecord, hash: string, now: number): CodeClaim[] {
  return liveClaims(record, now).filter((claim) => claim.hash !== hash);
}

function isCodeHash(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

function isCodeClaim(value: unknown): value is CodeClaim {
  return isJsonObject(value) && isCodeHash(value.hash) && typeof value.claimedAt === 'string' && Number.isFinite(Date.parse(value.claimedAt));
}
