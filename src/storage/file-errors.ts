import { errorCode } from '../log.js';

/**
 * What went wrong with a file of the data folder, in words for the log and the settings page. Node's
 * own messages name the call and the path ("EMFILE: too many open files, open '/…/session.json'");
 * these say what a user can do something about, with the code for a search.
 */

/** The failures a user meets on a small home server, and what each means for them. */
const WORDS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the storage is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  EIO: 'an input/output error',
};

/** "the disk is full (ENOSPC)"; the error's own message when it has no known code. */
export function describeFileError(error: unknown): string {
  const code = errorCode(error);
  if (code === undefined) {
    return error instanceof Error ? error.message : String(error);
  }
  const words = WORDS[code];
  return words === undefined ? code : `${words} (${code})`;
}

/**
 * A file that exists, or may exist, could not be read: too many open files, permission, an I/O error.
 * It is not a missing file: nothing may be concluded from it, and the next read tries again.
 */
export class FileReadError extends Error {
  override readonly name = 'FileReadError';
  readonly code: string | undefined;

  constructor(path: string, cause: unknown) {
    super(`Could not read ${path}: ${describeFileError(cause)}. It is read again next time.`, { cause });
    this.code = errorCode(cause);
  }
}
