import type { API } from 'homebridge';
import { platformWithTiming, PRODUCTION_TIMING } from './platform.js';
import { PLATFORM_NAME } from './settings.js';

export default (api: API): void => {
  api.registerPlatform(PLATFORM_NAME, platformWithTiming(PRODUCTION_TIMING));
};
