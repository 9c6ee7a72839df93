/**
 * Set up before each file of the `older` jest project: its e2e scenarios run on the older Homebridge
 * versions and Homebridge UI the plugin still supports (see homebridge-versions.ts).
 */
process.env.E2E_VERSIONS = 'older';
