/**
 * Lines of a Homebridge log that report a problem: a warning, an error, a failure, an unhandled
 * rejection or exception, or a line of a stack trace. Colours are gone from the captured lines (and
 * with them the log level), so the words decide.
 */
const PROBLEM = /\bwarn(ing)?\b|\berror\b|\bfail(s|ed|ure)?\b|unhandled|exception|^\s+at \S/i;

export function problemLines(lines: readonly string[]): string[] {
  return lines.filter((line) => PROBLEM.test(line));
}
