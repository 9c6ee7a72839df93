/**
 * HAP-NodeJS installs source-map-support when it loads, replacing Jest's stack-trace mapping: every
 * failure would then point at a line of the compiled JavaScript. Loading it here, between saving and
 * restoring the hook, keeps failures pointing at the TypeScript line. Tests take HAP from this module
 * (or from api.hap), never from a value import of '@homebridge/hap-nodejs'.
 */
const jestStackTraceHook = Error.prepareStackTrace;
const { default: hapNodeJs } = await import('@homebridge/hap-nodejs');
Error.prepareStackTrace = jestStackTraceHook;

export const hap = hapNodeJs;
