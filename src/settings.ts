/** The npm package name; Homebridge identifies the plugin by it. */
export const PLUGIN_NAME = 'homebridge-doorbell-motion';

/** The platform name; must equal `pluginAlias` in config.schema.json. */
export const PLATFORM_NAME = 'DoorbellMotion';

/**
 * Whether a platform block's `platform` names this plugin's platform: Homebridge, and the Homebridge
 * UI, take it alone or qualified by the package name, `homebridge-doorbell-motion.DoorbellMotion`.
 */
export function isOurPlatform(platform: unknown): boolean {
  return platform === PLATFORM_NAME || platform === `${PLUGIN_NAME}.${PLATFORM_NAME}`;
}
