/**
 * How many cases each fast-check property tries, and from which seed. `weight` is the number a
 * property was written with (5,000 for most; more for a cheap one, fewer for a slow one): CI tries a
 * fifth of it (1,000 for most) under each Node version, each run with a seed of its own, which has
 * found what the properties find; a developer's machine tries a tenth.
 *
 * `npm test` and CI pick one seed per run and print it (scripts/run-tests.mjs); `FC_SEED`, and for
 * one failure the `FC_PATH` fast-check prints with it, replay a run.
 */
export function propertyRuns(weight: number): { numRuns: number; seed?: number; path?: string; endOnFailure: boolean } {
  const replay = process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH };
  // CI services set CI=true; an empty or "false" value is a developer's machine.
  const ci = !['', 'false', '0'].includes(process.env.CI ?? '');
  return { numRuns: Math.ceil(weight / (ci ? 5 : 10)), endOnFailure: true, ...replay };
}
