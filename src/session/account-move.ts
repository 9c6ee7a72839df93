import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { errorCode, type Logger } from '../log.js';
import { DATA_FILES, type PrivateFolder } from '../storage/data-folder.js';
import { JsonFile } from '../storage/json-file.js';
import { accountKey, type AccountIdentity } from '../values/account-key.js';
import { isInstallation, isStoredSession, withSpent } from './session-store.js';

/**
 * A config that gains `accounts` keeps the session it had: the session.json and installation.json of
 * the data folder (where a config without `accounts` keeps them) move into the folder of the entry
 * that is the same account (same account server and e-mail), so nobody signs in again. The plugin at
 * launch and the settings page's server both call this; the first one to take the data folder's lock
 * moves the files, and the other finds nothing left to move.
 *
 * Never for an entry with a doorbell access token (it has no session), never over a session the
 * account's folder already holds (a newer sign-in), and only for the entry's own account.
 *
 * Resolves whether the files moved. A failure (the folder cannot be written) is thrown: nothing is
 * lost, the files stay where they were, and the next launch tries again.
 */
export async function moveTopLevelSession(root: PrivateFolder, target: PrivateFolder, account: AccountIdentity, log: Logger): Promise<boolean> {
  if (account.doorbellAccessToken !== undefined || account.account === undefined || root.path === target.path) {
    return false;
  }
  const key = accountKey(account);
  if (key === undefined) {
    return false;
  }
  const topSession = new JsonFile(root, DATA_FILES.session, isStoredSession, log);
  return root.whileLocked(async () => {
    const session = await topSession.read();
    if (session === undefined || accountKey({ account: { serverUrl: session.accountServer, email: session.email } }) !== key) {
      return false;
    }
    const topInstallation = new JsonFile(root, DATA_FILES.installation, isInstallation, log);
    const installation = await topInstallation.read();
    // The account folder's own writers hold its lock: the move waits for them and they for it.
    const moved = await target.whileLocked(async () => {
      if (await exists(join(target.path, DATA_FILES.session))) {
        return false;
      }
      // The installation first: a session without the codes it spent could send a spent code again.
      if (installation !== undefined && !(await exists(join(target.path, DATA_FILES.installation)))) {
        await rename(topInstallation.path, join(target.path, DATA_FILES.installation));
      }
      await rename(topSession.path, join(target.path, DATA_FILES.session));
      return true;
    });
    if (moved && installation !== undefined && (await exists(topInstallation.path))) {
      // The account's folder had an installation of its own (an attempt to sign in there): it keeps
      // its identity and learns the codes spent here, which must never be sent again either.
      const now = Date.now();
      await new JsonFile(target, DATA_FILES.installation, isInstallation, log).update(
        (current) => current && installation.spentCodeHashes.reduce((record, hash) => withSpent(record, hash, now), current),
      );
    }
    if (moved) {
      log.info(`Moved the session into the account's own folder (${target.path}): no new sign-in is needed.`);
    }
    return moved;
  });
}

/** Whether a file is there; a look that fails for another reason than a missing file is thrown, so nothing is overwritten on a guess. */
async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      return false;
    }
    throw error;
  }
}
