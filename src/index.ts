import type { API, Logging, PlatformConfig } from 'homebridge';
import { DoorbellMotionPlatform, PRODUCTION_TIMING } from './platform.js';
import { PLATFORM_NAME } from './settings.js';

export default (api: API): void => {
  // The constructor Homebridge calls (with log, config and api), bound to the production timings.
  api.registerPlatform(
    PLATFORM_NAME,
    class extends DoorbellMotionPlatform {
      constructor(logging: Logging, config: PlatformConfig, platformApi: API) {
        super(logging, config, platformApi, PRODUCTION_TIMING);
      }
    },
  );
};
