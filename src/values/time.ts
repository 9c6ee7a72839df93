/**
 * "5 minutes", "30 s": a length of time for the log (a wait, or how far two clocks differ), whole
 * minutes from one minute up, whole seconds below, never "0 s". Its sign is left to the sentence.
 */
export function describeDuration(ms: number): string {
  const absoluteMs = Math.abs(ms);
  if (absoluteMs >= 60_000) {
    const minutes = Math.round(absoluteMs / 60_000);
    return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  }
  return `${Math.max(1, Math.round(absoluteMs / 1000))} s`;
}

/** A time written as a string Date.parse reads: the `date-time` of the files the plugin writes. */
export function isTimestamp(text: string): boolean {
  return !Number.isNaN(Date.parse(text));
}
