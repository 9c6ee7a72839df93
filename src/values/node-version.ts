/**
 * The oldest Node.js the plugin runs on. Homebridge only warns about a Node.js outside a plugin's
 * `engines`, so the plugin checks for itself: an older one lacks JSON.parse's access to a number's
 * source text, which keeps doorbell ids above 2^53 exact (values/json.ts), and every notification
 * with a number in it would fail there.
 */
const MINIMUM_NODE = { major: 22, minor: 12 } as const;

/** Why alerts cannot flow on such a Node.js, in the words every part of the plugin shows. */
export const NODE_TOO_OLD_REASON = 'this Node.js is too old';

/** What the user can do about it. */
export const NODE_TOO_OLD_TODO = `Update Node.js to version ${MINIMUM_NODE.major}.${MINIMUM_NODE.minor} or later, then restart Homebridge.`;

/**
 * What to tell the user when `version` (process.versions.node by default, "20.20.2") is older than
 * the plugin needs; undefined when it is new enough.
 */
export function nodeVersionProblem(version: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const newEnough = major > MINIMUM_NODE.major || (major === MINIMUM_NODE.major && minor >= MINIMUM_NODE.minor);
  return newEnough ? undefined : `needs Node.js ${MINIMUM_NODE.major}.${MINIMUM_NODE.minor} or later; this is ${version}`;
}
