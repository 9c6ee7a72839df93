/** The npm package name; Homebridge identifies the plugin by it. */
export const PLUGIN_NAME = 'homebridge-doorbell-motion';

/** The platform name; must equal `pluginAlias` in config.schema.json. */
export const PLATFORM_NAME = 'DoorbellMotion';
