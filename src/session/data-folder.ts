import { join } from 'node:path';
import type { Logger } from '../log.js';
import { PrivateFolder } from './private-folder.js';

/**
 * `<Homebridge storage path>/doorbell-motion/`: everything the plugin keeps between restarts, shared
 * with the Homebridge UI's plugin server. Nothing is written anywhere else.
 */
const DATA_FOLDER_NAME = 'doorbell-motion';

export const DATA_FILES = {
  /** The signed-in session (token, account, time of sign-in). */
  session: 'session.json',
  /** This installation's id and the one-time codes it must never send again. */
  installation: 'installation.json',
  /** The push receiver's secret and the relay topic. */
  push: 'push.json',
  /** Where the relay stream picks up after a restart: the last message handled, or the relay's time. */
  relay: 'relay.json',
  /** What the running plugin knows of its delivery, for the settings page; never a secret. */
  status: 'status.json',
} as const;

export function dataFolderPath(storagePath: string): string {
  return join(storagePath, DATA_FOLDER_NAME);
}

/** One per process: the stores of a process share it, so their writes queue up instead of contending. */
export function openDataFolder(storagePath: string, log: Logger): PrivateFolder {
  return new PrivateFolder(dataFolderPath(storagePath), log);
}
