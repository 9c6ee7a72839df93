/**
 * SPEC §7: no log line at any level holds the code, a token, the receiver secret or an rriot value.
 * The plugin's own files say what its secrets were, so the check needs no access to its memory.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringsIn } from '../../src/log.js';

const DATA_FOLDER = 'doorbell-motion';

/**
 * rriot also holds the region's two letters (`US`), which are no secret and occur inside ordinary
 * words (`STATUS`); every value that grants access is far longer.
 */
const MIN_SECRET_LENGTH = 4;

/** The receiver secret (push.json) and every string nested in the session's rriot (session.json). */
export async function storedSecrets(storagePath: string): Promise<string[]> {
  const push = await readDataFile(storagePath, 'push.json');
  const session = await readDataFile(storagePath, 'session.json');
  const login = (session as { login?: { rriot?: unknown } } | undefined)?.login;
  return [...stringsIn((push as { receiverSecret?: unknown } | undefined)?.receiverSecret), ...stringsIn(login?.rriot)].filter(
    (secret) => secret.length >= MIN_SECRET_LENGTH,
  );
}

/** The lines that contain any of the secrets, each prefixed with its index in `lines`. */
export function linesRevealing(lines: readonly string[], secrets: readonly string[]): string[] {
  return lines.flatMap((line, index) => (secrets.some((secret) => line.includes(secret)) ? [`${index}: ${line}`] : []));
}

/** Undefined when the plugin never wrote the file, as on a run that never got that far. */
async function readDataFile(storagePath: string, name: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(join(storagePath, DATA_FOLDER, name), 'utf8')) as unknown;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined;
    }
    throw error;
  }
}
