/** A time written as a string Date.parse reads: the `date-time` of the files the plugin writes. */
export function isTimestamp(text: string): boolean {
  return !Number.isNaN(Date.parse(text));
}
