/** A Matter bridged device's node label holds at most 32 characters; matter.js refuses a longer one. */
export const MATTER_NAME_LIMIT = 32;

/**
 * A device's name over Matter: the doorbell's name and the device's suffix (` Doorbell`, ` Person`),
 * the doorbell's part cut so that the whole fits and the suffix survives, since the suffix is what
 * tells a doorbell's devices apart.
 */
export function matterName(doorbellName: string, suffix = ''): string {
  const room = MATTER_NAME_LIMIT - suffix.length;
  // Code points, not UTF-16 units: a cut never splits a character in two.
  const cut = [...doorbellName].slice(0, room).join('').trimEnd();
  return `${cut}${suffix}`;
}
