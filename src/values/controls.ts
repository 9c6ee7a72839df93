/** One switch a doorbell may carry in the Home app. */
interface ControlRow {
  /** The doorbell's setting in config.schema.json that adds the switch. */
  setting: string;
  /**
   * The doorbell's setting that makes the switch, turned off, turn itself on again after that many
   * minutes; without it the switch stays off until turned on.
   */
  minutesSetting: string;
  /** What the switch is called after the doorbell's name: `Front Door Motion Alerts`. */
  suffix: string;
  /**
   * Where the accessory's context keeps the switch's state across restarts. Never renamed: a switch
   * a user turned off would be on again after the update.
   */
  contextKey: string;
  /** How the log names it: `Motion alerts at Front Door turned off`. */
  inLog: string;
  /** What an off switch silences; the doorbell's accessory decides what that does to a motion or a ring. */
  silences: string;
  /** Added only with the doorbell button: without a ring, the switch would have nothing to act on. */
  needsButton: boolean;
}

/**
 * The switches of a doorbell, by their service subtype, one row each: the accessory, its kept state,
 * the log and the config's warnings all read them here, so another switch is its setting in the
 * schema, a row, and what it silences in the accessory. The subtype is how a switch is found on a
 * cached accessory, so it never changes either.
 */
export const CONTROLS = {
  'motion-alerts': { setting: 'motionSwitch', minutesSetting: 'motionSwitchMinutes', suffix: 'Motion Alerts', contextKey: 'motionAlerts', inLog: 'Motion alerts', silences: 'motion', needsButton: false },
  chime: { setting: 'chimeSwitch', minutesSetting: 'chimeSwitchMinutes', suffix: 'Chime', contextKey: 'chime', inLog: 'The chime', silences: 'chime', needsButton: true },
} as const satisfies Readonly<Record<string, ControlRow>>;

/** A switch, by its service subtype. */
export type Control = keyof typeof CONTROLS;

/** What some switch, turned off, silences. */
export type Silenced = (typeof CONTROLS)[Control]['silences'];

/** Every switch, in the table's order. */
export const CONTROL_SUBTYPES = Object.keys(CONTROLS) as Control[];

/** The setting of some switch's minutes off. */
export type MinutesSetting = (typeof CONTROLS)[Control]['minutesSetting'];

/** Where a switch off for a while keeps when it turns on again: `chimeOffUntil`. */
export type OffUntilKey = `${(typeof CONTROLS)[Control]['contextKey']}OffUntil`;

/**
 * The key, beside the switch's state in the accessory's context, of the moment it turns itself on
 * again (ms since the epoch); status.json's doorbells carry that moment under the same name. Never
 * renamed, for the same reason as the state's.
 */
export function offUntilKey(control: Control): OffUntilKey {
  return `${CONTROLS[control].contextKey}OffUntil`;
}
