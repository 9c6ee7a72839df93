/** Times and lengths of time as the log says them to a user. */

/**
 * How a length of time is put in words. `minutes`: a wait, or how far two clocks differ ("5 minutes",
 * "30 s"), whole minutes from one minute up, whole seconds below, never "0 s", its sign left to the
 * sentence. `rough`: how long something lasted or how old it is, in short units up to days ("45 s",
 * "14 min", "3 h 5 min", "2 days 4 h"), a negative length read as none.
 */
export type DurationStyle = 'minutes' | 'rough';

/** A length of time in words, in the given style (`minutes` when none is given). */
export function describeDuration(ms: number, style: DurationStyle = 'minutes'): string {
  return style === 'rough' ? roughDuration(ms) : inMinutes(ms);
}

function inMinutes(ms: number): string {
  const absoluteMs = Math.abs(ms);
  if (absoluteMs >= 60_000) {
    const minutes = Math.round(absoluteMs / 60_000);
    return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  }
  return `${Math.max(1, Math.round(absoluteMs / 1000))} s`;
}

function roughDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) {
    return `${seconds} s`;
  }
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) {
    return `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 48) {
    return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  }
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} days` : `${days} days ${hours % 24} h`;
}

/** A time of day on this machine's clock, 10:02, with its date when that is not today's. */
export function clockTime(ms: number, now: number): string {
  const time = new Date(ms);
  const day = (date: Date) => `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const hours = `${pad(time.getHours())}:${pad(time.getMinutes())}`;
  return day(time) === day(new Date(now)) ? hours : `${day(time)} ${hours}`;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** A time written as a string Date.parse reads: the `date-time` of the files the plugin writes. */
export function isTimestamp(text: string): boolean {
  return !Number.isNaN(Date.parse(text));
}
