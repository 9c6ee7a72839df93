/** The lines that contain any of the secrets, each prefixed with its index in `lines`. */
export function linesRevealing(lines: readonly string[], secrets: readonly string[]): string[] {
  return lines.flatMap((line, index) => (secrets.some((secret) => line.includes(secret)) ? [`${index}: ${line}`] : []));
}
