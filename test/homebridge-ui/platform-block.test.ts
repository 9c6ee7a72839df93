/**
 * The settings page's server finds the plugin's platform block in config.json as Homebridge and the
 * Homebridge UI do: under the platform's name alone or qualified by the package name.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPlatformBlock } from '../../homebridge-ui/platform-block.js';

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'platform-block-'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function configWith(platforms: unknown): Promise<string> {
  const path = join(folder, 'config.json');
  await writeFile(path, JSON.stringify({ bridge: { name: 'Homebridge' }, platforms }));
  return path;
}

describe('readPlatformBlock', () => {
  it.each(['DoorbellMotion', 'homebridge-doorbell-motion.DoorbellMotion'])('finds the block of platform %s', async (platform) => {
    const block = { platform, name: 'Doorbell Motion', doorbells: [{ deviceId: '1234567' }] };
    const path = await configWith([{ platform: 'Other', name: 'x' }, block]);

    await expect(readPlatformBlock(path)).resolves.toEqual(block);
  });

  it.each([
    ['another plugin with the same platform name', 'homebridge-other.DoorbellMotion'],
    ['another platform of the same plugin name', 'homebridge-doorbell-motion.Other'],
    ['the name in other letter case', 'doorbellmotion'],
  ])('does not take %s for it', async (_, platform) => {
    await expect(readPlatformBlock(await configWith([{ platform }]))).resolves.toBeUndefined();
  });

  it('answers undefined without any platforms', async () => {
    await expect(readPlatformBlock(await configWith(undefined))).resolves.toBeUndefined();
  });
});
