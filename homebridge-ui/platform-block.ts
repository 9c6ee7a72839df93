import { readFile } from 'node:fs/promises';
import { errorCode } from '#plugin/log.js';
import { isJsonObject } from '#plugin/values/json.js';
import { isOurPlatform } from '#plugin/settings.js';
import { SettingsError } from './settings-error.js';

/**
 * The plugin's platform block as config.json holds it now (the last saved settings, not what the
 * form shows unsaved); undefined when there is none. Read on every request: the UI writes the file.
 */
export async function readPlatformBlock(configPath: string): Promise<Record<string, unknown> | undefined> {
  let config: unknown;
  try {
    config = JSON.parse(await readFile(configPath, 'utf8'));
  } catch (error) {
    const code = errorCode(error);
    const why = code === undefined ? 'it is not valid JSON' : `it could not be read (${code})`;
    throw new SettingsError(`The Homebridge configuration ${configPath} cannot be used: ${why}.`);
  }
  const platforms = isJsonObject(config) && Array.isArray(config.platforms) ? (config.platforms as unknown[]) : [];
  return platforms.find((block): block is Record<string, unknown> => isJsonObject(block) && isOurPlatform(block.platform));
}
