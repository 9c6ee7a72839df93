/**
 * How many cases each fast-check property tries: thousands under CI, which runs the suite under two
 * Node versions (5,000 a run makes 10,000 a property in all), fewer on a developer's machine. A
 * failure prints fast-check's seed and path, and `FC_SEED` / `FC_PATH` replay it.
 */
export function propertyRuns(underCi: number): { numRuns: number; seed?: number; path?: string; endOnFailure: boolean } {
  const replay = process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH };
  // CI services set CI=true; an empty or "false" value is a developer's machine.
  const ci = !['', 'false', '0'].includes(process.env.CI ?? '');
  return { numRuns: ci ? underCi : Math.ceil(underCi / 10), endOnFailure: true, ...replay };
}
