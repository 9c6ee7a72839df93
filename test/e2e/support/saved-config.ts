/**
 * The plugin's platform block in the config.json the Homebridge UI saves: read, changed by hand, and
 * awaited after the UI's Save.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isOurPlatform } from '../../../src/settings.js';
import { pollUntil } from '../../../scripts/lib/poll.js';

/** The plugin's platform block in the config.json of a Homebridge storage; {} when there is none. */
export async function readSavedBlock(storagePath: string): Promise<Record<string, unknown>> {
  // The Homebridge UI writes the file in place, so a read in the middle of a write sees half of it: read again.
  const whole = async () => {
    const text = await readFile(join(storagePath, 'config.json'), 'utf8');
    try {
      return JSON.parse(text) as { platforms: Array<Record<string, unknown>> };
    } catch {
      return undefined;
    }
  };
  const config = await pollUntil(whole, (read) => read !== undefined, 5_000, 'config.json to hold whole JSON', 50);
  return config?.platforms.find((block) => isOurPlatform(block.platform)) ?? {};
}

/** Changes the plugin's platform block in config.json, as an edit by hand would; the page reads it when next opened. */
export async function changeSavedBlock(storagePath: string, change: (block: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
  const path = join(storagePath, 'config.json');
  const config = JSON.parse(await readFile(path, 'utf8')) as { platforms: Array<Record<string, unknown>> };
  config.platforms = config.platforms.map((block) => (isOurPlatform(block.platform) ? change(block) : block));
  await writeFile(path, `${JSON.stringify(config, null, 4)}\n`);
}

/** The block once `save` has made the UI write config.json anew, maybe with the same content. */
export async function savedBlockAfter(storagePath: string, save: () => Promise<void>): Promise<Record<string, unknown>> {
  // The UI may replace the file as it writes it: a moment without one is no answer yet.
  const writtenAt = async () => (await stat(join(storagePath, 'config.json')).catch(() => undefined))?.mtimeMs;
  const before = await writtenAt();
  await save();
  await pollUntil(writtenAt, (now) => now !== undefined && now !== before, 10_000, "the form's Save");
  return readSavedBlock(storagePath);
}
