import { randomBytes } from 'node:crypto';
import { isJsonObject } from '../values/json.js';
import type { Logger } from '../log.js';
import { DATA_FILES } from '../storage/data-folder.js';
import { JsonFile } from '../storage/json-file.js';
import type { PrivateFolder } from '../storage/data-folder.js';

/** push.json: what makes this installation's push address a capability. Both are secrets. */
export interface PushSecrets {
  /** The `<secret>` of the receiver's `/push/<secret>` path (direct mode). */
  receiverSecret: string;
  /** The relay topic (relay mode): knowing it is what lets anyone publish to this home. */
  relayTopic: string;
}

const RECEIVER_SECRET_BYTES = 32;

/**
 * `up` and 12 random base64url characters (72 random bits): 14 characters in all, the form an ntfy
 * relay recognises as a UnifiedPush topic, whose publishes it charges to the subscriber.
 */
const RELAY_TOPIC_PREFIX = 'up';
const RELAY_TOPIC_RANDOM_BYTES = 9;

/** base64url of 32 random bytes, unpadded: 43 characters. */
export function isReceiverSecret(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

function isRelayTopic(value: unknown): value is string {
  return typeof value === 'string' && /^up[A-Za-z0-9_-]{12}$/.test(value);
}

/** What push.json may hold: a file written before relay mode existed has no topic yet. */
type StoredPushSecrets = Pick<PushSecrets, 'receiverSecret'> & Partial<Pick<PushSecrets, 'relayTopic'>>;

/** Created once, then stable across restarts: the push address registered with the service stays the same. */
export class PushSecretStore {
  private readonly file: JsonFile<StoredPushSecrets>;

  constructor(folder: PrivateFolder, log: Logger) {
    this.file = new JsonFile(folder, DATA_FILES.push, isStoredPushSecrets, log);
  }

  /**
   * The stored secrets, completed when something is missing. A push.json that cannot be read throws:
   * new secrets would silently end delivery to the address registered with the old ones.
   */
  async secrets(): Promise<PushSecrets> {
    const stored = await this.file.read();
    if (stored?.relayTopic !== undefined) {
      return { receiverSecret: stored.receiverSecret, relayTopic: stored.relayTopic };
    }
    // Whatever is missing is created, under the lock, keeping what another process may have made meanwhile.
    const completed = await this.file.update((current) => ({
      receiverSecret: current?.receiverSecret ?? randomBytes(RECEIVER_SECRET_BYTES).toString('base64url'),
      relayTopic: current?.relayTopic ?? RELAY_TOPIC_PREFIX + randomBytes(RELAY_TOPIC_RANDOM_BYTES).toString('base64url'),
    }));
    return completed as PushSecrets;
  }
}

function isStoredPushSecrets(value: unknown): value is StoredPushSecrets {
  return (
    isJsonObject(value) &&
    isReceiverSecret(value.receiverSecret) &&
    (value.relayTopic === undefined || isRelayTopic(value.relayTopic))
  );
}
