import { isMessageId } from './ids.js';

/** Which cached messages a subscription asks for first. */
export type Since =
  | { kind: 'all' }
  | { kind: 'none' }
  /** The newest message of each topic. */
  | { kind: 'latest' }
  /** Strictly after the message with this id; everything cached when the id is unknown. */
  | { kind: 'id'; id: string }
  /** At or after this unix second. */
  | { kind: 'time'; seconds: number };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's time.ParseDuration units, in milliseconds (µ and μ are both accepted, as Go does). */
const DURATION_UNITS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

const DURATION = /^[-+]?((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const DURATION_PART = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/** A Go duration (`30s`, `1h30m`, `1.5h`, `-10m`; never days) in milliseconds, or undefined. */
export function parseGoDuration(text: string): number | undefined {
  if (text === '0' || text === '+0' || text === '-0') {
    return 0;
  }
  if (!DURATION.test(text)) {
    return undefined;
  }
  let total = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) {
    total += Number(amount) * DURATION_UNITS[unit];
  }
  return text.startsWith('-') ? -total : total;
}

function parseInt64(text: string): number | undefined {
  if (!/^[-+]?\d+$/.test(text)) {
    return undefined;
  }
  const value = BigInt(text);
  return value >= INT64_MIN && value <= INT64_MAX ? Number(value) : undefined;
}

/**
 * The `since` parameter as ntfy reads it: the keywords, then a message id, then a unix timestamp, then
 * a duration back from `nowMs`, in that order (so 12 digits are an id, not a time). Absent means
 * everything for a poll and nothing for a stream. Undefined: invalid (ntfy answers 400, code 40008).
 */
export function parseSince(text: string, poll: boolean, nowMs: number): Since | undefined {
  if (text === '') {
    return poll ? { kind: 'all' } : { kind: 'none' };
  }
  if (text === 'all' || text === 'none' || text === 'latest') {
    return { kind: text };
  }
  if (isMessageId(text)) {
    return { kind: 'id', id: text };
  }
  const seconds = parseInt64(text);
  if (seconds !== undefined) {
    return { kind: 'time', seconds };
  }
  const durationMs = parseGoDuration(text);
  return durationMs === undefined ? undefined : { kind: 'time', seconds: Math.floor((nowMs - durationMs) / 1000) };
}
