/**
 * HAP-NodeJS installs source-map-support when it loads, replacing Jest's stack-trace mapping: every
 * failure would then point at a line of the compiled JavaScript. Loading it here, between saving and
 * restoring the hook, keeps failures pointing at the TypeScript line. Tests take HAP from this module
 * (or from api.hap), never from a value import of '@homebridge/hap-nodejs'.
 */
const jestStackTraceHook = Error.prepareStackTrace;
const hapModule = await import('@homebridge/hap-nodejs');
Error.prepareStackTrace = jestStackTraceHook;

/**
 * Node (and so jest) hands a CommonJS module's exports over as its default export; tsx, which runs
 * the benchmark (scripts/bench.ts) on the same harness, hands them over as named exports only.
 */
export const hap = (hapModule.default ?? hapModule) as typeof hapModule.default;
