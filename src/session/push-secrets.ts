import { randomBytes } from 'node:crypto';
import { isJsonObject } from '../json.js';
import type { Logger } from '../log.js';
import { DATA_FILES } from './data-folder.js';
import { JsonFile } from './json-file.js';
import type { PrivateFolder } from './private-folder.js';

/** push.json: what makes this installation's push address a capability. */
export interface PushSecrets {
  /** The `<secret>` of the receiver's `/push/<secret>` path. */
  receiverSecret: string;
}

const RECEIVER_SECRET_BYTES = 32;

/** base64url of 32 random bytes, unpadded: 43 characters. */
export function isReceiverSecret(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** Created once, then stable across restarts: the push address registered with the service stays the same. */
export class PushSecretStore {
  private readonly file: JsonFile<PushSecrets>;

  constructor(folder: PrivateFolder, log: Logger) {
    this.file = new JsonFile(folder, DATA_FILES.push, isPushSecrets, log);
  }

  secrets(): Promise<PushSecrets> {
    return this.file.readOrCreate(() => ({ receiverSecret: randomBytes(RECEIVER_SECRET_BYTES).toString('base64url') }));
  }
}

function isPushSecrets(value: unknown): value is PushSecrets {
  return isJsonObject(value) && isReceiverSecret(value.receiverSecret);
}
