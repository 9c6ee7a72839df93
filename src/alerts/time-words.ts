/** Times and durations as the log says them to a user. */

/** How long, roughly: 45 s, 14 min, 3 h 5 min, 2 days 4 h. */
export function durationWords(ms: number): string {
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
